#pragma once
// The device formulas of the pointwise operations (elementwise, activation, unary), shared by the generic
// interpreter (pointwise.cu) and the conv / matmul post-op epilogue (epilogue.cu), so both compute exactly
// the same thing. The NVRTC generator (nvrtc_source.cpp) writes the same expressions as text. Semantics
// follow src/engine/ops/scalar_ops.cpp.

#include <cmath>

#include "engine/backends/cuda/device_util.cuh"

namespace kiln::engine::cuda::pw {

// Operation codes as in include/kiln/engine/layers.h (ElementwiseOp, ActivationKind, UnaryOp order).
// clang-format off
enum : int { eAdd, eSub, eMul, eDiv, eFloorDiv, eTruncDiv, eMod, ePow, eMax, eMin, eEq, eNe, eLt, eLe, eGt, eGe,
             eAnd, eOr, eXor };
enum : int { aRelu, aSigmoid, aTanh, aGeluErf, aGeluTanh, aSilu, aHardSwish, aHardSigmoid, aLeakyRelu, aElu,
             aSelu, aSoftplus, aSoftsign, aClip, aMish };
enum : int { uExp, uLog, uSqrt, uRsqrt, uAbs, uNeg, uRecip, uErf, uSin, uCos, uTan, uAsin, uAcos, uAtan, uSinh,
             uCosh, uFloor, uCeil, uRound, uSign, uNot, uExpm1, uLog1p, uIsNan, uIsInf };
// clang-format on

template <typename T>
__device__ __forceinline__ T clampv(T x, T lo, T hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

template <typename T>
__device__ __forceinline__ T elementwise(int op, T a, T b, bool integral) {
  switch (op) {
    case eAdd: return a + b;
    case eSub: return a - b;
    case eMul: return a * b;
    case eDiv: return integral ? (b == T(0) ? T(0) : trunc(a / b)) : a / b;
    case eTruncDiv: return b == T(0) && integral ? T(0) : trunc(a / b);
    case eFloorDiv: return b == T(0) && integral ? T(0) : floor(a / b);
    case eMod: {
      if (integral && b == T(0)) return T(0);
      T r = fmod(a, b);
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
      return r;
    }
    case ePow: return pow(a, b);
    case eMax: return (isnan(a) || isnan(b)) ? T(NAN) : (a > b ? a : b);
    case eMin: return (isnan(a) || isnan(b)) ? T(NAN) : (a < b ? a : b);
    case eEq: return a == b;
    case eNe: return a != b;
    case eLt: return a < b;
    case eLe: return a <= b;
    case eGt: return a > b;
    case eGe: return a >= b;
    case eAnd: return (a != T(0)) && (b != T(0));
    case eOr: return (a != T(0)) || (b != T(0));
    default: return (a != T(0)) != (b != T(0));
  }
}

/// x[j] = f(x[j]) for each of the N values.
template <typename T, int N, typename F>
__device__ __forceinline__ void each(T (&x)[N], F f) {
#pragma unroll
  for (int j = 0; j < N; ++j) x[j] = f(x[j]);
}

/// Activation `kind` over N values: the switch is taken once for all of them (the epilogue applies it to a
/// 16-byte vector of elements; the interpreter to one).
template <typename T, int N>
__device__ __forceinline__ void activation_n(int kind, T (&x)[N], T alpha, T beta) {
  switch (kind) {
    case aRelu: each(x, [](T v) { return v < T(0) ? T(0) : v; }); break;  // NaN propagates
    case aSigmoid: each(x, [](T v) { return T(1) / (T(1) + exp(-v)); }); break;
    case aTanh: each(x, [](T v) { return tanh(v); }); break;
    case aGeluErf: each(x, [](T v) { return T(0.5) * v * (T(1) + erf(v * T(0.70710678118654752))); }); break;
    case aGeluTanh:
      each(x, [](T v) {
        return T(0.5) * v * (T(1) + tanh(T(0.79788456080286536) * (v + T(0.044715) * v * v * v)));
      });
      break;
    case aSilu: each(x, [](T v) { return v / (T(1) + exp(-v)); }); break;
    case aHardSwish: each(x, [](T v) { return v * clampv(v + T(3), T(0), T(6)) / T(6); }); break;
    case aHardSigmoid: each(x, [=](T v) { return clampv(alpha * v + beta, T(0), T(1)); }); break;
    case aLeakyRelu: each(x, [=](T v) { return v >= T(0) ? v : alpha * v; }); break;
    case aElu: each(x, [=](T v) { return v > T(0) ? v : alpha * (exp(v) - T(1)); }); break;
    case aSelu:
      each(x, [](T v) {
        return T(1.0507009873554805) * (v > T(0) ? v : T(1.6732632423543772) * (exp(v) - T(1)));
      });
      break;
    case aSoftplus: {
      T b = beta == T(0) ? T(1) : beta, threshold = alpha == T(0) ? T(20) : alpha;
      each(x, [=](T v) { return b * v > threshold ? v : log1p(exp(b * v)) / b; });
      break;
    }
    case aSoftsign: each(x, [](T v) { return v / (T(1) + fabs(v)); }); break;
    case aClip: each(x, [=](T v) { return v < alpha ? alpha : (v > beta ? beta : v); }); break;
    default: each(x, [](T v) { return v * tanh(log1p(exp(v))); }); break;
  }
}

template <typename T>
__device__ __forceinline__ T activation(int kind, T x, T alpha, T beta) {
  T v[1] = {x};
  activation_n(kind, v, alpha, beta);
  return v[0];
}

template <typename T>
__device__ __forceinline__ T unary(int op, T x) {
  switch (op) {
    case uExp: return exp(x);
    case uLog: return log(x);
    case uSqrt: return sqrt(x);
    case uRsqrt: return T(1) / sqrt(x);
    case uAbs: return fabs(x);
    case uNeg: return -x;
    case uRecip: return T(1) / x;
    case uErf: return erf(x);
    case uSin: return sin(x);
    case uCos: return cos(x);
    case uTan: return tan(x);
    case uAsin: return asin(x);
    case uAcos: return acos(x);
    case uAtan: return atan(x);
    case uSinh: return sinh(x);
    case uCosh: return cosh(x);
    case uFloor: return floor(x);
    case uCeil: return ceil(x);
    case uRound: return rint(x);  // half to even
    case uSign: return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
    case uNot: return x == T(0) ? T(1) : T(0);
    case uExpm1: return expm1(x);
    case uLog1p: return log1p(x);
    case uIsNan: return isnan(x) ? T(1) : T(0);
    default: return isinf(x) ? T(1) : T(0);
  }
}

}  // namespace kiln::engine::cuda::pw
