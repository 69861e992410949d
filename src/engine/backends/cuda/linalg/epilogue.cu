// The conv / matmul post-op epilogue (see epilogue.h). One thread per 16-byte vector of the output (8 fp16 /
// bf16 or 4 fp32 elements): the instruction loop and its switches are taken once per vector, the values stay
// in registers, per-element sources are read with one vector load each and per-channel sources by walking the
// channel index along the vector (one division per vector, not per element). Computes in float with the
// generic interpreter's formulas, so the results are those of launch_pointwise on the same chain.

#include "engine/backends/cuda/linalg/epilogue.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "engine/backends/cuda/pointwise/pointwise_ops.cuh"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;

/// Elements [base, base + count) of `p` (count <= N; the rest of x is 0).
template <typename S, int N>
__device__ __forceinline__ void load(const void* p, uint32_t base, int count, float (&x)[N]) {
  const S* e = static_cast<const S*>(p) + base;
  if (count == N) {
    const Pack<S, N> pk = *reinterpret_cast<const Pack<S, N>*>(e);
#pragma unroll
    for (int j = 0; j < N; ++j) x[j] = to_float(pk.v[j]);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) x[j] = j < count ? to_float(e[j]) : 0.0f;
  }
}

template <typename S, int N>
__device__ __forceinline__ void store(void* p, uint32_t base, int count, const float (&x)[N]) {
  S* e = static_cast<S*>(p) + base;
  if (count == N) {
    Pack<S, N> pk;
#pragma unroll
    for (int j = 0; j < N; ++j) pk.v[j] = from_float<S>(x[j]);
    *reinterpret_cast<Pack<S, N>*>(e) = pk;
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) {
      if (j < count) e[j] = from_float<S>(x[j]);
    }
  }
}

/// The per-channel values of elements base .. base + N - 1: element i reads (i / div) % len.
template <typename S, int N>
__device__ __forceinline__ void load_channel(const EpilogueSource& s, uint32_t base, float (&x)[N]) {
  const S* e = static_cast<const S*>(s.data);
  const uint32_t div = static_cast<uint32_t>(s.div), len = static_cast<uint32_t>(s.len);
  const uint32_t q = base / div;
  uint32_t r = base - q * div, c = q % len;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    x[j] = to_float(e[c]);
    if (++r == div) {
      r = 0;
      if (++c == len) c = 0;
    }
  }
}

template <typename S, int N>
__global__ void __launch_bounds__(kThreads) epilogue_kernel(const __grid_constant__ EpilogueParams p) {
  const uint32_t n = static_cast<uint32_t>(p.n), groups = (n + N - 1) / N;
  const uint32_t step = gridDim.x * blockDim.x;
  for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += step) {
    const uint32_t base = g * N;
    const int count = n - base < static_cast<uint32_t>(N) ? static_cast<int>(n - base) : N;
    float x[N];
    load<S, N>(p.out, base, count, x);
    for (int s = 0; s < p.n_instr; ++s) {
      const PwInstr& in = p.instr[s];
      if (in.kind == kPwActivation) {
        pw::activation_n(in.op, x, in.alpha, in.beta);
        continue;
      }
      const EpilogueSource& src = p.src[in.b];
      float y[N];
      if (src.len == 0) {
        load<S, N>(src.data, base, count, y);
      } else {
        load_channel<S, N>(src, base, y);
      }
#pragma unroll
      for (int j = 0; j < N; ++j) x[j] = x[j] + in.alpha * y[j];
    }
    store<S, N>(p.out, base, count, x);
  }
}

template <typename S>
void launch_as(const EpilogueParams& p, Stream stream) {
  constexpr int kVec = 16 / sizeof(S);
  auto aligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 == 0; };
  bool vec = aligned(p.out);
  for (int s = 0; s < p.n_sources; ++s) vec = vec && (p.src[s].len != 0 || aligned(p.src[s].data));
  if (vec) {
    epilogue_kernel<S, kVec><<<grid_for((p.n + kVec - 1) / kVec, kThreads), kThreads, 0, stream>>>(p);
  } else {
    epilogue_kernel<S, 1><<<grid_for(p.n, kThreads), kThreads, 0, stream>>>(p);
  }
}

}  // namespace

void launch_epilogue(const EpilogueParams& p, Stream stream) {
  if (p.n == 0) return;
  switch (p.dtype) {
    case kF16: launch_as<__half>(p, stream); break;
    case kBF16: launch_as<__nv_bfloat16>(p, stream); break;
    default: launch_as<float>(p, stream); break;
  }
}

}  // namespace kiln::engine::cuda
