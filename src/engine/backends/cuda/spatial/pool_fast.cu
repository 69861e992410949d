// Fast paths of the pooling kernels for float tensors (fp32, fp16, bf16), declined (false) where they do not
// apply so that the generic kernel (pooling.cu) runs instead:
// - windowed 2-D pooling of channels-last tensors: one thread per output position and VEC consecutive
//   channels, one 16-byte load per window element where the channel count and the pointers allow, index math
//   in 32 bits. The generic kernel gave every element a thread doing 64-bit divisions and a dtype switch per
//   load: resnet50's stem max pool took 0.23 ms at batch 32 on an H100, 16% of the engine.
// - global pooling (the mean or max over every spatial element of each image and channel, a squeeze-excite or
//   classifier pool): planar rows are summed by a block (long rows) or a warp (short rows); channels-last
//   [N, S, C] is split along S into enough blocks to fill the GPU, partial sums going through the workspace,
//   then combined. Sums are in double and rounded once, so the planar and channels-last paths agree bit for
//   bit.

#include <cmath>

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/spatial/spatial_launch.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;
/// Blocks a split channels-last global pool aims for (a few waves on a 132-SM GPU).
constexpr int64_t kTargetBlocks = 528;

struct Window2d {
  int n, ih, iw, c, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
  int cvecs;  // c / VEC
  bool is_max, count_include_pad;
};

__device__ __forceinline__ float max_nan(float acc, float v) { return (isnan(v) || v > acc) ? v : acc; }

template <typename T, int VEC>
__global__ void window2d_nhwc_kernel(const T* __restrict__ in, T* __restrict__ out, Window2d p, int total) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    const int cv = i % p.cvecs;
    int q = i / p.cvecs;
    const int ow = q % p.ow;
    q /= p.ow;
    const int oh = q % p.oh, n = q / p.oh;
    const int h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
    const int hend = min(h0 + (p.kh - 1) * p.dh + 1, p.ih + p.ph);
    const int wend = min(w0 + (p.kw - 1) * p.dw + 1, p.iw + p.pw);
    float acc[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) acc[j] = p.is_max ? -INFINITY : 0.0f;
    int count = 0;
    for (int a = 0; a < p.kh; ++a) {
      const int h = h0 + a * p.dh;
      if (h < 0 || h >= p.ih) continue;
      for (int b = 0; b < p.kw; ++b) {
        const int w = w0 + b * p.dw;
        if (w < 0 || w >= p.iw) continue;
        const Pack<T, VEC> v =
            *reinterpret_cast<const Pack<T, VEC>*>(in + ((n * p.ih + h) * p.iw + w) * p.c + cv * VEC);
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          const float x = to_float(v.v[j]);
          acc[j] = p.is_max ? max_nan(acc[j], x) : acc[j] + x;
        }
        ++count;
      }
    }
    Pack<T, VEC> r;
    const int div = p.count_include_pad ? (hend - h0) * (wend - w0) : count;
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      r.v[j] = from_float<T>(p.is_max ? acc[j] : (div > 0 ? acc[j] / static_cast<float>(div) : 0.0f));
    *reinterpret_cast<Pack<T, VEC>*>(out + static_cast<int64_t>(i) * VEC) = r;
  }
}

template <typename T, int VEC>
void window2d(const void* in, void* out, Window2d p, Stream stream) {
  p.cvecs = p.c / VEC;
  const int total = p.n * p.oh * p.ow * p.cvecs;
  window2d_nhwc_kernel<T, VEC><<<grid_for(total, kThreads), kThreads, 0, stream>>>(
      static_cast<const T*>(in), static_cast<T*>(out), p, total);
}

template <typename T>
void window2d_dispatch(const void* in, void* out, const Window2d& p, Stream stream) {
  constexpr int kVec = 16 / sizeof(T);
  if (p.c % kVec == 0 && aligned16(in) && aligned16(out))
    window2d<T, kVec>(in, out, p, stream);
  else
    window2d<T, 1>(in, out, p, stream);
}

// ---- global pooling ----

/// Combines two partial results of a global pool (sum, or max propagating NaN).
__device__ __forceinline__ double combine(bool is_max, double a, double b) {
  return is_max ? (isnan(a) || isnan(b) ? NAN : fmax(a, b)) : a + b;
}

/// Planar rows [rows, S]: one warp per row (`per_block` rows a block), or the whole block on one row
/// (per_block == 0). VEC elements a load where a row starts 16-byte aligned.
template <typename T, int VEC>
__global__ void global_rows_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t s,
                                   bool is_max, int per_block) {
  __shared__ double part[kThreads];
  const bool warp_rows = per_block > 0;
  const int lane = warp_rows ? threadIdx.x % kWarp : threadIdx.x;
  const int width = warp_rows ? kWarp : blockDim.x;
  const int64_t first =
      warp_rows ? static_cast<int64_t>(blockIdx.x) * per_block + threadIdx.x / kWarp : blockIdx.x;
  const int64_t step = warp_rows ? static_cast<int64_t>(gridDim.x) * per_block : gridDim.x;
  for (int64_t row = first; row < rows; row += step) {
    const T* x = in + row * s;
    double acc = is_max ? -INFINITY : 0.0;
    for (int64_t k = lane; k < s / VEC; k += width) {
      const Pack<T, VEC> v = reinterpret_cast<const Pack<T, VEC>*>(x)[k];
#pragma unroll
      for (int j = 0; j < VEC; ++j) acc = combine(is_max, acc, static_cast<double>(to_float(v.v[j])));
    }
    if (warp_rows) {
      for (int o = kWarp / 2; o > 0; o /= 2) acc = combine(is_max, acc, __shfl_xor_sync(0xffffffffu, acc, o));
    } else {
      part[threadIdx.x] = acc;
      __syncthreads();
      for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) part[threadIdx.x] = combine(is_max, part[threadIdx.x], part[threadIdx.x + h]);
        __syncthreads();
      }
      acc = part[0];
      __syncthreads();
    }
    if (lane == 0) out[row] = from_float<T>(static_cast<float>(is_max ? acc : acc / static_cast<double>(s)));
  }
}

/// Channels-last [N, S, C]: block (cols x rows threads) sums channel vectors [col0, col0 + cols) of image n
/// over the spatial range of split blockIdx.y; with one split it writes the result, else a partial to `ws`
/// ([N, splits, C] doubles).
template <typename T, int VEC>
__global__ void global_nhwc_kernel(const T* __restrict__ in, T* __restrict__ out, double* __restrict__ ws,
                                   int64_t s, int64_t c, int chunks, bool is_max) {
  extern __shared__ double tile[];  // [rows][cols * VEC]
  const int cols = blockDim.x, rows = blockDim.y;
  const int64_t n = blockIdx.x / chunks, cv = static_cast<int64_t>(blockIdx.x % chunks) * cols + threadIdx.x;
  const int splits = gridDim.y;
  const int64_t per_split = (s + splits - 1) / splits;
  const int64_t begin = blockIdx.y * per_split, end = min(s, begin + per_split);
  const bool live = cv * VEC < c;
  double acc[VEC];
#pragma unroll
  for (int j = 0; j < VEC; ++j) acc[j] = is_max ? -INFINITY : 0.0;
  if (live) {
    for (int64_t k = begin + threadIdx.y; k < end; k += rows) {
      const Pack<T, VEC> v = *reinterpret_cast<const Pack<T, VEC>*>(in + (n * s + k) * c + cv * VEC);
#pragma unroll
      for (int j = 0; j < VEC; ++j) acc[j] = combine(is_max, acc[j], static_cast<double>(to_float(v.v[j])));
    }
  }
#pragma unroll
  for (int j = 0; j < VEC; ++j) tile[(threadIdx.y * cols + threadIdx.x) * VEC + j] = acc[j];
  __syncthreads();
  if (threadIdx.y == 0 && live) {
    for (int r = 1; r < rows; ++r)
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        acc[j] = combine(is_max, acc[j], tile[(r * cols + threadIdx.x) * VEC + j]);
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const int64_t ch = cv * VEC + j;
      if (splits == 1)
        out[n * c + ch] =
            from_float<T>(static_cast<float>(is_max ? acc[j] : acc[j] / static_cast<double>(s)));
      else
        ws[(n * splits + blockIdx.y) * c + ch] = acc[j];
    }
  }
}

template <typename T>
__global__ void global_nhwc_finish_kernel(const double* __restrict__ ws, T* __restrict__ out, int64_t n,
                                          int64_t s, int64_t c, int splits, bool is_max) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n * c;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t img = i / c, ch = i % c;
    double acc = ws[img * splits * c + ch];
    for (int k = 1; k < splits; ++k) acc = combine(is_max, acc, ws[(img * splits + k) * c + ch]);
    out[i] = from_float<T>(static_cast<float>(is_max ? acc : acc / static_cast<double>(s)));
  }
}

template <typename T, int VEC>
void global_nhwc(const void* in, void* out, int64_t n, int64_t s, int64_t c, bool is_max, void* ws,
                 size_t ws_bytes, Stream stream) {
  const int64_t cvecs = c / VEC;
  const int cols = static_cast<int>(cvecs < kWarp ? cvecs : kWarp), rows = kThreads / cols;
  const int64_t chunks = (cvecs + cols - 1) / cols;
  int64_t splits = (kTargetBlocks + n * chunks - 1) / (n * chunks);
  const int64_t most_useful = (s + rows - 1) / rows;  // each split at least one row per thread
  if (splits > most_useful) splits = most_useful;
  const int64_t fit = static_cast<int64_t>(ws_bytes / (sizeof(double) * static_cast<size_t>(n * c)));
  if (splits > fit) splits = fit;
  if (splits > 65535) splits = 65535;
  if (splits < 1) splits = 1;
  const dim3 grid(static_cast<unsigned>(n * chunks), static_cast<unsigned>(splits)), block(cols, rows);
  const size_t smem = sizeof(double) * kThreads * VEC;
  global_nhwc_kernel<T, VEC><<<grid, block, smem, stream>>>(static_cast<const T*>(in), static_cast<T*>(out),
                                                            static_cast<double*>(ws), s, c,
                                                            static_cast<int>(chunks), is_max);
  if (splits > 1)
    global_nhwc_finish_kernel<T><<<grid_for(n * c, kThreads), kThreads, 0, stream>>>(
        static_cast<const double*>(ws), static_cast<T*>(out), n, s, c, static_cast<int>(splits), is_max);
}

template <typename T>
void global_dispatch(const void* in, void* out, int64_t n, int64_t s, int64_t c, bool channels_last,
                     bool is_max, void* ws, size_t ws_bytes, Stream stream) {
  constexpr int kVec = 16 / sizeof(T);
  if (channels_last) {
    if (c % kVec == 0 && aligned16(in))
      global_nhwc<T, kVec>(in, out, n, s, c, is_max, ws, ws_bytes, stream);
    else
      global_nhwc<T, 1>(in, out, n, s, c, is_max, ws, ws_bytes, stream);
    return;
  }
  const int64_t rows = n * c;
  const bool block_rows = s >= 2048;
  const int per_block = block_rows ? 0 : kThreads / kWarp;
  const int64_t blocks = block_rows ? rows : (rows + per_block - 1) / per_block;
  const unsigned grid = static_cast<unsigned>(blocks < (1 << 20) ? blocks : (1 << 20));
  const auto* x = static_cast<const T*>(in);
  auto* y = static_cast<T*>(out);
  if ((s * sizeof(T)) % 16 == 0 && aligned16(in))
    global_rows_kernel<T, kVec>
        <<<grid, kThreads, 0, stream>>>(x, y, rows, s / kVec * kVec, is_max, per_block);
  else
    global_rows_kernel<T, 1><<<grid, kThreads, 0, stream>>>(x, y, rows, s, is_max, per_block);
}

}  // namespace

bool launch_pool2d_nhwc_fast(const void* in, void* out, int dtype, int64_t images, const PoolParams& p,
                             Stream stream) {
  if (p.adaptive || p.channels <= 0 || p.in[0] != 1 || p.out[0] != 1 || p.win[0] != 1) return false;
  const int64_t in_elems = images * p.in[1] * p.in[2] * p.channels;
  const int64_t out_elems = images * p.out[1] * p.out[2] * p.channels;
  if (in_elems >= (int64_t{1} << 31) || out_elems >= (int64_t{1} << 31) || out_elems == 0) return false;
  auto i32 = [](int64_t v) { return static_cast<int>(v); };
  const Window2d w{i32(images),   i32(p.in[1]),       i32(p.in[2]),  i32(p.channels),  i32(p.out[1]),
                   i32(p.out[2]), i32(p.win[1]),      i32(p.win[2]), i32(p.stride[1]), i32(p.stride[2]),
                   i32(p.pad[1]), i32(p.pad[2]),      i32(p.dil[1]), i32(p.dil[2]),    0,
                   p.kind == 0,   p.count_include_pad};
  switch (dtype) {
    case kF32: window2d_dispatch<float>(in, out, w, stream); return true;
    case kF16: window2d_dispatch<__half>(in, out, w, stream); return true;
    case kBF16: window2d_dispatch<__nv_bfloat16>(in, out, w, stream); return true;
    default: return false;
  }
}

size_t global_pool_workspace(int64_t images, int64_t channels) {
  return sizeof(double) * static_cast<size_t>((kTargetBlocks + images) * channels);
}

bool launch_global_pool(const void* in, void* out, int dtype, int64_t images, int64_t spatial,
                        int64_t channels, bool channels_last, bool is_max, void* workspace,
                        size_t workspace_bytes, Stream stream) {
  if (images * channels == 0 || spatial == 0) return images * channels == 0;
  switch (dtype) {
    case kF32:
      global_dispatch<float>(in, out, images, spatial, channels, channels_last, is_max, workspace,
                             workspace_bytes, stream);
      return true;
    case kF16:
      global_dispatch<__half>(in, out, images, spatial, channels, channels_last, is_max, workspace,
                              workspace_bytes, stream);
      return true;
    case kBF16:
      global_dispatch<__nv_bfloat16>(in, out, images, spatial, channels, channels_last, is_max, workspace,
                                     workspace_bytes, stream);
      return true;
    default: return false;
  }
}

}  // namespace kiln::engine::cuda
