// NonZero: the multi-indices of non-zero elements in row-major order, in three steps on the stream: each
// block counts the non-zeros of its contiguous chunk, one thread turns the counts into chunk offsets (and the
// total), and each block writes its chunk's indices from its offset, tile by tile (warp ballots keep the
// element order).

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/movement/movement_launch.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ bool is_nonzero(const void* in, int dtype, int64_t e) {
  return load_as<double>(in, dtype, e) != 0.0;
}

__global__ void nonzero_count_kernel(const void* in, int dtype, int64_t n, int64_t chunk, long long* counts) {
  __shared__ long long warp_sums[kWarps];
  const int64_t lo = blockIdx.x * chunk, hi = min(n, lo + chunk);
  long long c = 0;
  for (int64_t e = lo + threadIdx.x; e < hi; e += blockDim.x) c += is_nonzero(in, dtype, e) ? 1 : 0;
  for (int s = 16; s > 0; s >>= 1) c += __shfl_down_sync(0xffffffffu, c, s);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = c;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long total = 0;
    for (int w = 0; w < kWarps; ++w) total += warp_sums[w];
    counts[blockIdx.x] = total;
  }
}

/// counts[0..blocks) become exclusive offsets; counts[blocks] the total.
__global__ void nonzero_offsets_kernel(long long* counts, int blocks) {
  long long run = 0;
  for (int b = 0; b < blocks; ++b) {
    long long c = counts[b];
    counts[b] = run;
    run += c;
  }
  counts[blocks] = run;
}

__global__ void nonzero_write_kernel(const void* in, int dtype, Shape shape, int64_t n, int64_t chunk,
                                     const long long* offsets, long long* out) {
  __shared__ int warp_counts[kWarps];
  const int64_t lo = blockIdx.x * chunk, hi = min(n, lo + chunk);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  long long base = offsets[blockIdx.x];
  for (int64_t tile = lo; tile < hi; tile += kThreads) {
    const int64_t e = tile + threadIdx.x;
    const bool flag = e < hi && is_nonzero(in, dtype, e);
    const unsigned mask = __ballot_sync(0xffffffffu, flag);
    if (lane == 0) warp_counts[warp] = __popc(mask);
    __syncthreads();
    int warp_offset = 0, tile_total = 0;
    for (int w = 0; w < kWarps; ++w) {
      if (w < warp) warp_offset += warp_counts[w];
      tile_total += warp_counts[w];
    }
    if (flag) {
      const long long row = base + warp_offset + __popc(mask & ((1u << lane) - 1u));
      int64_t rem = e;
      for (int d = shape.rank - 1; d >= 0; --d) {
        out[row * shape.rank + d] = rem % shape.d[d];
        rem /= shape.d[d];
      }
    }
    base += tile_total;
    __syncthreads();  // warp_counts is rewritten by the next tile
  }
}

}  // namespace

void launch_nonzero(const void* in, int dtype, const Shape& shape, long long* out, long long* workspace,
                    long long* host_count, Stream stream) {
  const int64_t n = shape_numel(shape);
  if (n == 0) {
    *host_count = 0;
    return;
  }
  int64_t want = (n + kThreads * 8 - 1) / (kThreads * 8);
  const int blocks = static_cast<int>(want < kNonZeroBlocks ? want : kNonZeroBlocks);
  const int64_t chunk = (n + blocks - 1) / blocks;
  nonzero_count_kernel<<<blocks, kThreads, 0, stream>>>(in, dtype, n, chunk, workspace);
  nonzero_offsets_kernel<<<1, 1, 0, stream>>>(workspace, blocks);
  nonzero_write_kernel<<<blocks, kThreads, 0, stream>>>(in, dtype, shape, n, chunk, workspace, out);
  cudaMemcpyAsync(host_count, workspace + blocks, sizeof(long long), cudaMemcpyDeviceToHost, stream);
}

}  // namespace kiln::engine::cuda
