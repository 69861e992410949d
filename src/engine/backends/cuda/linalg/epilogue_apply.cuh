#pragma once
// The device side of the conv / matmul post-op epilogue (epilogue.h): vector loads and stores of output-like
// tensors and the post-op chain applied to values in registers. Shared by the epilogue pass (epilogue.cu) and
// the kernels that apply the chain as they store their results (depthwise.cu), so both compute the same
// formulas (pointwise_ops.cuh).

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/linalg/e4m3.cuh"
#include "engine/backends/cuda/linalg/epilogue.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "engine/backends/cuda/pointwise/pointwise_ops.cuh"

namespace kiln::engine::cuda::epi {

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

/// Elements [base, base + count) of `p` as E4M3 codes of x * inverse_scale (count <= N).
template <int N>
__device__ __forceinline__ void store_e4m3(void* p, uint32_t base, int count, const float (&x)[N],
                                           float inverse_scale) {
  uint8_t* e = static_cast<uint8_t*>(p) + base;
  if (count == N) {
    Pack<uint8_t, N> pk;
#pragma unroll
    for (int j = 0; j < N; ++j) pk.v[j] = to_e4m3(x[j] * inverse_scale);
    *reinterpret_cast<Pack<uint8_t, N>*>(e) = pk;
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) {
      if (j < count) e[j] = to_e4m3(x[j] * inverse_scale);
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

/// Applies the chain of `p` to x, the values of output elements base .. base + count - 1 (count <= N), in
/// registers: instruction s reads the result of s - 1; per-element sources are read at the same elements,
/// per-channel ones by channel.
template <typename S, int N>
__device__ __forceinline__ void apply_chain(const EpilogueParams& p, uint32_t base, int count,
                                            float (&x)[N]) {
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
}

/// Whether every per-element source of `p` (and so its output) is 16-byte aligned: what the vector loads of
/// the chain need (per-channel sources are read element by element).
inline bool sources_aligned16(const EpilogueParams& p) {
  for (int s = 0; s < p.n_sources; ++s) {
    if (p.src[s].len == 0 && !aligned16(p.src[s].data)) return false;
  }
  return true;
}

}  // namespace kiln::engine::cuda::epi
