// TopK along one axis, with the CPU reference's order: by value, ties by lower index (a total order, so the
// result does not depend on how the work is split). One block per row sorts (value, index) pairs in shared
// memory with a bitonic network: a row of up to kSortSlots elements at once; a longer row in chunks, keeping
// the best k of what it has seen in front (k <= kMaxChunkedK). Longer rows with a larger k fall back to
// ranking: every element counts the elements that come before it (quadratic per row, but fully parallel).

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/reduction/reduction_launch.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kSortSlots = 4096;  // 4096 doubles + 4096 ints: 48 KiB of static shared memory
constexpr int kMaxChunkedK = kSortSlots / 2;
constexpr int kSentinel = 0x7fffffff;  // index of an empty slot (after every element)

/// Whether element (a, ia) comes before (b, ib): NaN is larger than every number; equal values by index.
__device__ __forceinline__ bool before(double a, long long ia, double b, long long ib, bool largest) {
  if (ia == kSentinel) return false;
  if (ib == kSentinel) return true;
  bool na = isnan(a), nb = isnan(b);
  if (na || nb) return na && nb ? ia < ib : (largest ? na : nb);
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

__device__ __forceinline__ void copy_element(void* dst, int64_t di, const void* src, int64_t si, int dtype) {
  switch (dtype) {
    case kF64:
    case kI64: static_cast<long long*>(dst)[di] = static_cast<const long long*>(src)[si]; break;
    case kF32:
    case kI32: static_cast<int*>(dst)[di] = static_cast<const int*>(src)[si]; break;
    case kF16:
    case kBF16:
    case kI16: static_cast<short*>(dst)[di] = static_cast<const short*>(src)[si]; break;
    default: static_cast<unsigned char*>(dst)[di] = static_cast<const unsigned char*>(src)[si]; break;
  }
}

/// Sorts slots (a power of two) pairs into `before` order. All threads of the block take part.
__device__ void bitonic_sort(double* key, int* pos, int slots, bool largest) {
  for (int size = 2; size <= slots; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < slots / 2; t += blockDim.x) {
        int a = 2 * stride * (t / stride) + t % stride, b = a + stride;
        bool ascending = (a & size) == 0;
        bool swap = ascending ? before(key[b], pos[b], key[a], pos[a], largest)
                              : before(key[a], pos[a], key[b], pos[b], largest);
        if (swap) {
          double kv = key[a];
          key[a] = key[b];
          key[b] = kv;
          int pv = pos[a];
          pos[a] = pos[b];
          pos[b] = pv;
        }
      }
      __syncthreads();
    }
  }
}

__global__ void topk_sort_kernel(const void* in, int dtype, int64_t outer, int64_t n, int64_t inner,
                                 int64_t k, bool largest, int slots, void* values, long long* indices) {
  __shared__ double key[kSortSlots];
  __shared__ int pos[kSortSlots];
  const int64_t rows = outer * inner;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t o = row / inner, i = row % inner, base = o * n * inner + i;
    int64_t next = 0;  // the next element of the row to load
    int kept = 0;      // slots in front that hold the best elements so far
    do {
      for (int s = kept + threadIdx.x; s < slots; s += blockDim.x) {
        int64_t j = next + (s - kept);
        bool valid = j < n;
        key[s] = valid ? load_as<double>(in, dtype, base + j * inner) : 0.0;
        pos[s] = valid ? static_cast<int>(j) : kSentinel;
      }
      next += slots - kept;
      __syncthreads();
      bitonic_sort(key, pos, slots, largest);
      kept = static_cast<int>(k);
    } while (next < n);
    for (int64_t s = threadIdx.x; s < k; s += blockDim.x) {
      int64_t at = (o * k + s) * inner + i;
      copy_element(values, at, in, base + static_cast<int64_t>(pos[s]) * inner, dtype);
      indices[at] = pos[s];
    }
    __syncthreads();  // the next row reuses the shared arrays
  }
}

__global__ void topk_rank_kernel(const void* in, int dtype, int64_t outer, int64_t n, int64_t inner,
                                 int64_t k, bool largest, void* values, long long* indices) {
  const int64_t total = outer * inner * n;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = t % n, row = t / n, o = row / inner, i = row % inner, base = o * n * inner + i;
    const double v = load_as<double>(in, dtype, base + j * inner);
    int64_t rank = 0;
    for (int64_t q = 0; q < n && rank < k; ++q) {
      if (before(load_as<double>(in, dtype, base + q * inner), q, v, j, largest)) ++rank;
    }
    if (rank < k) {
      int64_t at = (o * k + rank) * inner + i;
      copy_element(values, at, in, base + j * inner, dtype);
      indices[at] = j;
    }
  }
}

}  // namespace

void launch_topk(const void* in, int dtype, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest,
                 void* values, long long* indices, Stream stream) {
  const int64_t rows = outer * inner;
  if (rows == 0 || k == 0 || n == 0) return;
  if (n <= kSortSlots || k <= kMaxChunkedK) {
    int slots = 1;
    while (slots < n && slots < kSortSlots) slots <<= 1;
    int threads = slots / 2 < 32 ? 32 : slots / 2 > 512 ? 512 : slots / 2;
    topk_sort_kernel<<<grid_for(rows, 1), threads, 0, stream>>>(in, dtype, outer, n, inner, k, largest, slots,
                                                                values, indices);
  } else {
    constexpr int kThreads = 256;
    topk_rank_kernel<<<grid_for(rows * n, kThreads), kThreads, 0, stream>>>(in, dtype, outer, n, inner, k,
                                                                            largest, values, indices);
  }
}

}  // namespace kiln::engine::cuda
