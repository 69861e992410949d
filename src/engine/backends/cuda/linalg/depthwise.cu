// The depthwise convolution kernel (nhwc_conv_launch.h). Channels-last, so a thread takes V consecutive
// channels (one 16-byte load of x and of each weight) of TW consecutive outputs along a row: with the kernel
// size and stride known at compile time (3, 5 or 7 square, stride 1 or 2), the input columns the TW outputs
// share are loaded once and the row's weights stay in registers. Other shapes (dilation, rectangular or other
// kernel sizes, other strides) take the same loop with run-time bounds and TW = 1. Sums are in float, over
// the window in row-major order, then the post-op chain runs on the values in registers (epilogue_apply.cuh)
// and each output is stored once: no pass over the output after the convolution.
//
// Why a kernel of our own: cuDNN's legacy API ran efficientnet_b0's depthwise convolutions fast on the GPU
// but took 0.23-0.34 ms of the host per call (a plan rebuilt behind each call), which bound every engine that
// runs without CUDA graphs; this one costs a launch.

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/linalg/epilogue_apply.cuh"
#include "engine/backends/cuda/linalg/nhwc_conv_launch.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;

struct Dw {
  int n, h, w, c, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
  int cvecs, ogroups;  // c / V, ceil(ow / TW)
};

/// K: square kernel size and ST: stride known at compile time (dilation 1), or 0: the run-time p.kh x p.kw,
/// strides and dilations (TW must then be 1).
template <typename S, int V, int K, int ST, int TW>
__global__ void __launch_bounds__(kThreads)
    depthwise_kernel(const S* __restrict__ x, const S* __restrict__ w, S* __restrict__ y, const Dw d,
                     const __grid_constant__ EpilogueParams chain, int total) {
  static_assert(K > 0 || TW == 1, "run-time shapes take one output per thread");
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    const int cv = i % d.cvecs;
    int q = i / d.cvecs;
    const int og = q % d.ogroups;
    q /= d.ogroups;
    const int oy = q % d.oh, b = q / d.oh;
    const int c0 = cv * V, ox0 = og * TW;
    float acc[TW][V];
#pragma unroll
    for (int t = 0; t < TW; ++t) {
#pragma unroll
      for (int v = 0; v < V; ++v) acc[t][v] = 0.0f;
    }
    const int rows = K ? K : d.kh, cols = K ? K : d.kw;
    const int iy0 = oy * (ST ? ST : d.sh) - d.ph, ix0 = ox0 * (ST ? ST : d.sw) - d.pw;
    for (int r = 0; r < rows; ++r) {
      const int iy = iy0 + r * (K ? 1 : d.dh);
      if (iy < 0 || iy >= d.h) continue;
      const S* xrow = x + (static_cast<int64_t>(b) * d.h + iy) * d.w * d.c + c0;
      const S* wrow = w + r * cols * d.c + c0;
      if constexpr (K > 0) {
        float wv[K][V];
#pragma unroll
        for (int s = 0; s < K; ++s) epi::load<S, V>(wrow + s * d.c, 0, V, wv[s]);
        constexpr int kSpan = (TW - 1) * ST + K;
#pragma unroll
        for (int j = 0; j < kSpan; ++j) {
          const int ix = ix0 + j;
          if (ix < 0 || ix >= d.w) continue;
          float xv[V];
          epi::load<S, V>(xrow + ix * d.c, 0, V, xv);
#pragma unroll
          for (int t = 0; t < TW; ++t) {
            const int s = j - t * ST;
            if (s < 0 || s >= K) continue;
#pragma unroll
            for (int v = 0; v < V; ++v) acc[t][v] = fmaf(xv[v], wv[s][v], acc[t][v]);
          }
        }
      } else {
        for (int s = 0; s < cols; ++s) {
          const int ix = ix0 + s * d.dw;
          if (ix < 0 || ix >= d.w) continue;
          float xv[V], wv[V];
          epi::load<S, V>(xrow + ix * d.c, 0, V, xv);
          epi::load<S, V>(wrow + s * d.c, 0, V, wv);
#pragma unroll
          for (int v = 0; v < V; ++v) acc[0][v] = fmaf(xv[v], wv[v], acc[0][v]);
        }
      }
    }
#pragma unroll
    for (int t = 0; t < TW; ++t) {
      const int ox = ox0 + t;
      if (ox >= d.ow) break;
      const uint32_t base = static_cast<uint32_t>(((b * d.oh + oy) * d.ow + ox) * d.c + c0);
      epi::apply_chain<S, V>(chain, base, V, acc[t]);
      epi::store<S, V>(y, base, V, acc[t]);
    }
  }
}

template <typename S, int V, int K, int ST, int TW>
void run(const NhwcConvParams& p, const EpilogueParams& chain, Stream stream) {
  Dw d{p.n,  p.h,  p.w_in, p.c_in, p.oh, p.ow, p.kh,       p.kw,
       p.sh, p.sw, p.ph,   p.pw,   p.dh, p.dw, p.c_in / V, (p.ow + TW - 1) / TW};
  const int64_t total = int64_t{d.n} * d.oh * d.ogroups * d.cvecs;
  depthwise_kernel<S, V, K, ST, TW><<<grid_for(total, kThreads), kThreads, 0, stream>>>(
      static_cast<const S*>(p.x), static_cast<const S*>(p.w), static_cast<S*>(p.y), d, chain,
      static_cast<int>(total));
}

template <typename S, int V, int ST, int TW>
bool run_square(const NhwcConvParams& p, const EpilogueParams& chain, Stream stream) {
  switch (p.kh) {
    case 3: run<S, V, 3, ST, TW>(p, chain, stream); return true;
    case 5: run<S, V, 5, ST, TW>(p, chain, stream); return true;
    case 7: run<S, V, 7, ST, TW>(p, chain, stream); return true;
    default: return false;
  }
}

template <typename S>
void launch_as(const NhwcConvParams& p, const EpilogueParams& chain, Stream stream) {
  constexpr int kVec = 16 / sizeof(S);
  bool vec = p.c_in % kVec == 0 && aligned16(p.x) && aligned16(p.w) && aligned16(p.y);
  vec = vec && epi::sources_aligned16(chain);
  if (!vec) return run<S, 1, 0, 0, 1>(p, chain, stream);
  const bool square = p.kh == p.kw && p.sh == p.sw && p.dh == 1 && p.dw == 1;
  if (square && p.sh == 1 && run_square<S, kVec, 1, 4>(p, chain, stream)) return;
  if (square && p.sh == 2 && run_square<S, kVec, 2, 2>(p, chain, stream)) return;
  run<S, kVec, 0, 0, 1>(p, chain, stream);
}

}  // namespace

void launch_depthwise_nhwc(const NhwcConvParams& p, const EpilogueParams& chain, Stream stream) {
  if (int64_t{p.n} * p.oh * p.ow * p.c_in == 0) return;
  with_float_element(p.dtype, [&](auto t) { launch_as<decltype(t)>(p, chain, stream); });
}

}  // namespace kiln::engine::cuda
