// The grouped convolution kernel (nhwc_conv_launch.h), for groups of a few dozen channels (regnet's
// 24-channel groups, resnext's 4- to 32-channel ones). Channels-last, so a thread takes V consecutive output
// channels of one group (one 16-byte load of each weight row) for TW consecutive outputs along a row (4 at
// stride 1, 2 else): for each window tap it reads V input channels of its group per output at a time (16-byte
// loads) and multiplies each by a vector of V weights, so a weight load serves TW x V products and an input
// load V x V. Group widths or channel counts off the vector take one output channel per thread and scalar
// loads. Sums are in float, over the window taps in row-major order and the group's input channels in order;
// then the post-op chain runs on the values in registers (epilogue_apply.cuh) and each output is stored once.
//
// Why a kernel of our own: cuDNN's graph API has no engine for some grouped convolutions and its legacy API
// took 0.37 ms of the host per call (regnet_y_1_6gf's grouped 3x3 convolutions at batch 1, for 0.006 ms on
// the GPU), which bound every engine that runs without CUDA graphs; this one costs a launch.

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/linalg/epilogue_apply.cuh"
#include "engine/backends/cuda/linalg/nhwc_conv_launch.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;

struct Gc {
  int n, h, w, cin, cout, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
  int cin_g, cout_g;    // channels per group
  int covecs, ogroups;  // cout / V, ceil(ow / TW)
};

template <typename S, int V, int TW>
__global__ void __launch_bounds__(kThreads)
    grouped_kernel(const S* __restrict__ x, const S* __restrict__ w, S* __restrict__ y, const Gc d,
                   const __grid_constant__ EpilogueParams chain, int total) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    const int cv = i % d.covecs;
    int q = i / d.covecs;
    const int og = q % d.ogroups;
    q /= d.ogroups;
    const int oy = q % d.oh, b = q / d.oh;
    const int co0 = cv * V, ox0 = og * TW;
    const int ci0 = (co0 / d.cout_g) * d.cin_g;
    float acc[TW][V];
#pragma unroll
    for (int t = 0; t < TW; ++t) {
#pragma unroll
      for (int v = 0; v < V; ++v) acc[t][v] = 0.0f;
    }
    for (int r = 0; r < d.kh; ++r) {
      const int iy = oy * d.sh - d.ph + r * d.dh;
      if (iy < 0 || iy >= d.h) continue;
      const S* xrow = x + (static_cast<int64_t>(b) * d.h + iy) * d.w * d.cin + ci0;
      for (int s = 0; s < d.kw; ++s) {
        const S* wtap = w + static_cast<int64_t>(r * d.kw + s) * d.cin_g * d.cout + co0;
        int ix[TW];
        bool in[TW];
#pragma unroll
        for (int t = 0; t < TW; ++t) {
          ix[t] = (ox0 + t) * d.sw - d.pw + s * d.dw;
          in[t] = ox0 + t < d.ow && ix[t] >= 0 && ix[t] < d.w;
        }
        for (int ci = 0; ci < d.cin_g; ci += V) {
          float xv[TW][V];
#pragma unroll
          for (int t = 0; t < TW; ++t) {
            if (in[t]) {
              epi::load<S, V>(xrow + ix[t] * d.cin + ci, 0, V, xv[t]);
            } else {
#pragma unroll
              for (int j = 0; j < V; ++j) xv[t][j] = 0.0f;
            }
          }
#pragma unroll
          for (int j = 0; j < V; ++j) {
            float wv[V];
            epi::load<S, V>(wtap + (ci + j) * d.cout, 0, V, wv);
#pragma unroll
            for (int t = 0; t < TW; ++t) {
#pragma unroll
              for (int v = 0; v < V; ++v) acc[t][v] = fmaf(xv[t][j], wv[v], acc[t][v]);
            }
          }
        }
      }
    }
#pragma unroll
    for (int t = 0; t < TW; ++t) {
      const int ox = ox0 + t;
      if (ox >= d.ow) break;
      const uint32_t base = static_cast<uint32_t>(((b * d.oh + oy) * d.ow + ox) * d.cout + co0);
      epi::apply_chain<S, V>(chain, base, V, acc[t]);
      epi::store<S, V>(y, base, V, acc[t]);
    }
  }
}

template <typename S, int V, int TW>
void run(const NhwcConvParams& p, const EpilogueParams& chain, Stream stream) {
  Gc d{p.n,
       p.h,
       p.w_in,
       p.c_in,
       p.c_out,
       p.oh,
       p.ow,
       p.kh,
       p.kw,
       p.sh,
       p.sw,
       p.ph,
       p.pw,
       p.dh,
       p.dw,
       p.c_in / p.groups,
       p.c_out / p.groups,
       p.c_out / V,
       (p.ow + TW - 1) / TW};
  const int64_t total = int64_t{d.n} * d.oh * d.ogroups * d.covecs;
  grouped_kernel<S, V, TW><<<grid_for(total, kThreads), kThreads, 0, stream>>>(
      static_cast<const S*>(p.x), static_cast<const S*>(p.w), static_cast<S*>(p.y), d, chain,
      static_cast<int>(total));
}

template <typename S>
void launch_as(const NhwcConvParams& p, const EpilogueParams& chain, Stream stream) {
  constexpr int kVec = 16 / sizeof(S);
  const int cin_g = p.c_in / p.groups, cout_g = p.c_out / p.groups;
  bool vec = cin_g % kVec == 0 && cout_g % kVec == 0 && aligned16(p.x) && aligned16(p.w) && aligned16(p.y);
  vec = vec && epi::sources_aligned16(chain);
  if (!vec) return run<S, 1, 1>(p, chain, stream);
  if (p.sw == 1) return run<S, kVec, 4>(p, chain, stream);
  run<S, kVec, 2>(p, chain, stream);
}

}  // namespace

void launch_grouped_nhwc(const NhwcConvParams& p, const EpilogueParams& chain, Stream stream) {
  if (int64_t{p.n} * p.oh * p.ow * p.c_out == 0) return;
  with_float_element(p.dtype, [&](auto t) { launch_as<decltype(t)>(p, chain, stream); });
}

}  // namespace kiln::engine::cuda
