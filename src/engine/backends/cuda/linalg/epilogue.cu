// The conv / matmul post-op epilogue (see epilogue.h). One thread per 16-byte vector of the output (8 fp16 /
// bf16 or 4 fp32 elements): the instruction loop and its switches are taken once per vector, the values stay
// in registers, per-element sources are read with one vector load each and per-channel sources by walking the
// channel index along the vector (one division per vector, not per element). Computes in float with the
// generic interpreter's formulas, so the results are those of launch_pointwise on the same chain.

#include "engine/backends/cuda/linalg/epilogue_apply.cuh"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;

template <typename S, int N>
__global__ void __launch_bounds__(kThreads) epilogue_kernel(const __grid_constant__ EpilogueParams p) {
  const uint32_t n = static_cast<uint32_t>(p.n), groups = (n + N - 1) / N;
  const uint32_t step = gridDim.x * blockDim.x;
  for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += step) {
    const uint32_t base = g * N;
    const int count = n - base < static_cast<uint32_t>(N) ? static_cast<int>(n - base) : N;
    float x[N];
    epi::load<S, N>(p.out, base, count, x);
    epi::apply_chain<S, N>(p, base, count, x);
    if (p.e4m3_out) {
      epi::store_e4m3<N>(p.e4m3_out, base, count, x, p.e4m3_inverse_scale);
    } else {
      epi::store<S, N>(p.out, base, count, x);
    }
  }
}

template <typename S>
void launch_as(const EpilogueParams& p, Stream stream) {
  constexpr int kVec = 16 / sizeof(S);
  // (source 0 is the output)
  const bool vec =
      epi::sources_aligned16(p) && (!p.e4m3_out || reinterpret_cast<uintptr_t>(p.e4m3_out) % kVec == 0);
  if (vec) {
    epilogue_kernel<S, kVec><<<grid_for((p.n + kVec - 1) / kVec, kThreads), kThreads, 0, stream>>>(p);
  } else {
    epilogue_kernel<S, 1><<<grid_for(p.n, kThreads), kThreads, 0, stream>>>(p);
  }
}

}  // namespace

void launch_epilogue(const EpilogueParams& p, Stream stream) {
  if (p.n == 0) return;
  with_float_element(p.dtype, [&](auto t) { launch_as<decltype(t)>(p, stream); });
}

}  // namespace kiln::engine::cuda
