// The generic pointwise kernel: evaluates a small program per output element (elementwise, activation,
// unary, cast, select and fused chains). A first version: the program is interpreted; NVRTC-compiled fused
// kernels replace it later. Semantics follow src/engine/reference/scalar_ops.cpp.

#include <cmath>

#include "engine/backends/cuda/device_util.cuh"

namespace kiln::engine::cuda {
namespace {

// Operation codes as in include/kiln/engine/layers.h (ElementwiseOp, ActivationKind, UnaryOp order).
enum : int { eAdd, eSub, eMul, eDiv, eFloorDiv, eTruncDiv, eMod, ePow, eMax, eMin, eEq, eNe, eLt, eLe, eGt, eGe,
             eAnd, eOr, eXor };
enum : int { aRelu, aSigmoid, aTanh, aGeluErf, aGeluTanh, aSilu, aHardSwish, aHardSigmoid, aLeakyRelu, aElu,
             aSelu, aSoftplus, aSoftsign, aClip, aMish };
enum : int { uExp, uLog, uSqrt, uRsqrt, uAbs, uNeg, uRecip, uErf, uSin, uCos, uTan, uAsin, uAcos, uAtan, uSinh,
             uCosh, uFloor, uCeil, uRound, uSign, uNot, uExpm1, uLog1p, uIsNan, uIsInf };

template <typename T>
__device__ T clampv(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }

template <typename T>
__device__ T elementwise(int op, T a, T b, bool integral) {
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

template <typename T>
__device__ T activation(int kind, T x, T alpha, T beta) {
  switch (kind) {
    case aRelu: return x > T(0) ? x : T(0);
    case aSigmoid: return T(1) / (T(1) + exp(-x));
    case aTanh: return tanh(x);
    case aGeluErf: return T(0.5) * x * (T(1) + erf(x * T(0.70710678118654752)));
    case aGeluTanh: return T(0.5) * x * (T(1) + tanh(T(0.79788456080286536) * (x + T(0.044715) * x * x * x)));
    case aSilu: return x / (T(1) + exp(-x));
    case aHardSwish: return x * clampv(x + T(3), T(0), T(6)) / T(6);
    case aHardSigmoid: return clampv(alpha * x + beta, T(0), T(1));
    case aLeakyRelu: return x >= T(0) ? x : alpha * x;
    case aElu: return x > T(0) ? x : alpha * (exp(x) - T(1));
    case aSelu: return T(1.0507009873554805) * (x > T(0) ? x : T(1.6732632423543772) * (exp(x) - T(1)));
    case aSoftplus: {
      T b = beta == T(0) ? T(1) : beta, threshold = alpha == T(0) ? T(20) : alpha;
      return b * x > threshold ? x : log1p(exp(b * x)) / b;
    }
    case aSoftsign: return x / (T(1) + fabs(x));
    case aClip: return x < alpha ? alpha : (x > beta ? beta : x);
    default: return x * tanh(log1p(exp(x)));
  }
}

template <typename T>
__device__ T unary(int op, T x) {
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

template <typename T>
__global__ void pointwise_kernel(const PwProgram p, const Shape shape, void* out, int out_dtype, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[kMaxPwSources] = {};
    int64_t rem = i;
    for (int k = shape.rank - 1; k >= 0; --k) {
      int64_t idx = rem % shape.d[k];
      rem /= shape.d[k];
#pragma unroll
      for (int s = 0; s < kMaxPwSources; ++s) off[s] += idx * p.src[s].st[k];
    }
    T temps[kMaxPwInstrs];
    auto operand = [&](int r) -> T {
      if (r >= kPwTemp) return temps[r - kPwTemp];
      return load_as<T>(p.src[r].data, p.src[r].dtype, off[r]);
    };
    T result = T(0);
    for (int s = 0; s < p.n_instr; ++s) {
      const PwInstr& in = p.instr[s];
      T a = operand(in.a);
      switch (in.kind) {
        case kPwElementwise: result = elementwise<T>(in.op, a, operand(in.b), p.integral); break;
        case kPwActivation: result = activation<T>(in.op, a, T(in.alpha), T(in.beta)); break;
        case kPwUnary: result = unary<T>(in.op, a); break;
        case kPwSelect: result = a != T(0) ? operand(in.b) : operand(in.c); break;
        case kPwScaleAdd: result = a + T(in.alpha) * operand(in.b); break;
        default: result = a; break;
      }
      temps[s] = result;
    }
    store_as<T>(out, out_dtype, i, result);
  }
}

}  // namespace

void launch_pointwise(const PwProgram& program, const Shape& out_shape, void* out, int out_dtype, bool use_double,
                      Stream stream) {
  int64_t n = shape_numel(out_shape);
  if (n == 0) return;
  constexpr int kThreads = 256;
  if (use_double) {
    pointwise_kernel<double><<<grid_for(n, kThreads), kThreads, 0, stream>>>(program, out_shape, out, out_dtype, n);
  } else {
    pointwise_kernel<float><<<grid_for(n, kThreads), kThreads, 0, stream>>>(program, out_shape, out, out_dtype, n);
  }
}

}  // namespace kiln::engine::cuda
