// The vec pointwise kernels' arithmetic instructions (instructions.h): activations, unary math, binary add ..
// min and pow; pow by a scalar 2, 3, 0.5, -1 or 1 runs as multiplies (GPT-2's tanh GELU cubes its input:
// std::pow per element took half of GPT-2's time).

#include <cmath>

#include "engine/backends/cpu/kernel_registry.h"
#include "engine/backends/cpu/pointwise/instructions.h"
#include "engine/backends/cpu/vec_math.h"

namespace kiln::engine::cpu::fast {
namespace {

bool unary_ok(UnaryOp op) {
  switch (op) {
    case UnaryOp::Not:
    case UnaryOp::IsNan:
    case UnaryOp::IsInf: return false;  // logic.cpp's
    default: return op <= UnaryOp::IsInf;
  }
}

bool elementwise_ok(ElementwiseOp op) {
  switch (op) {
    case ElementwiseOp::Add:
    case ElementwiseOp::Sub:
    case ElementwiseOp::Mul:
    case ElementwiseOp::Div:
    case ElementwiseOp::Pow:
    case ElementwiseOp::Max:
    case ElementwiseOp::Min: return true;
    default:
      return false;  // floor_div, trunc_div, mod: rounding a float quotient is not the reference's double one
  }
}

KILN_SIMD_CLONES
void run_activation(const ActivationParams& p, const float* x, float* y, int64_t n) {
  float alpha = static_cast<float>(p.alpha), beta = static_cast<float>(p.beta);
  switch (p.kind) {
    case ActivationKind::Relu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0 ? 0.0f : x[i];  // NaN propagates, as torch.relu
      return;
    case ActivationKind::Sigmoid:
      for (int64_t i = 0; i < n; ++i) y[i] = vec::sigmoid(x[i]);
      return;
    case ActivationKind::Tanh:
      for (int64_t i = 0; i < n; ++i) y[i] = vec::tanh(x[i]);
      return;
    case ActivationKind::GeluErf:
      for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + vec::erf(x[i] * 0.70710678118654752f));
      return;
    case ActivationKind::GeluTanh:
      for (int64_t i = 0; i < n; ++i) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + vec::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
      }
      return;
    case ActivationKind::Silu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * vec::sigmoid(x[i]);
      return;
    case ActivationKind::HardSwish:
      for (int64_t i = 0; i < n; ++i) {
        float t = x[i] + 3.0f;
        t = t < 0 ? 0.0f : (t > 6.0f ? 6.0f : t);
        y[i] = x[i] * t / 6.0f;
      }
      return;
    case ActivationKind::HardSigmoid:
      for (int64_t i = 0; i < n; ++i) {
        float t = alpha * x[i] + beta;
        y[i] = t < 0 ? 0.0f : (t > 1.0f ? 1.0f : t);
      }
      return;
    case ActivationKind::LeakyRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] >= 0 ? x[i] : alpha * x[i];
      return;
    case ActivationKind::Elu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : alpha * (vec::exp(x[i]) - 1.0f);
      return;
    case ActivationKind::Selu:
      for (int64_t i = 0; i < n; ++i)
        y[i] = 1.0507009873554805f * (x[i] > 0 ? x[i] : 1.6732632423543772f * (vec::exp(x[i]) - 1.0f));
      return;
    case ActivationKind::Clip:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < alpha ? alpha : (x[i] > beta ? beta : x[i]);
      return;
    case ActivationKind::Softsign:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::fabs(x[i]));
      return;
    case ActivationKind::Softplus: {
      float b = p.beta == 0 ? 1.0f : beta, th = p.alpha == 0 ? 20.0f : alpha;
      for (int64_t i = 0; i < n; ++i) y[i] = b * x[i] > th ? x[i] : std::log1p(std::exp(b * x[i])) / b;
      return;
    }
    case ActivationKind::Mish:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * std::tanh(std::log1p(std::exp(x[i])));
      return;
  }
}

KILN_SIMD_CLONES
void run_unary(UnaryOp op, const float* x, float* y, int64_t n) {
  switch (op) {
    case UnaryOp::Exp:
      for (int64_t i = 0; i < n; ++i) y[i] = vec::exp(x[i]);
      return;
    case UnaryOp::Sqrt:
      for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
      return;
    case UnaryOp::Rsqrt:
      for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / std::sqrt(x[i]);
      return;
    case UnaryOp::Abs:
      for (int64_t i = 0; i < n; ++i) y[i] = std::fabs(x[i]);
      return;
    case UnaryOp::Neg:
      for (int64_t i = 0; i < n; ++i) y[i] = -x[i];
      return;
    case UnaryOp::Recip:
      for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / x[i];
      return;
    case UnaryOp::Erf:
      for (int64_t i = 0; i < n; ++i) y[i] = vec::erf(x[i]);
      return;
    case UnaryOp::Floor:
      for (int64_t i = 0; i < n; ++i) y[i] = std::floor(x[i]);
      return;
    case UnaryOp::Ceil:
      for (int64_t i = 0; i < n; ++i) y[i] = std::ceil(x[i]);
      return;
    case UnaryOp::Round:
      for (int64_t i = 0; i < n; ++i) y[i] = std::nearbyint(x[i]);
      return;  // half to even
    // NaN gives 0, as the reference's x > 0 ? 1 : (x < 0 ? -1 : 0).
    case UnaryOp::Sign:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? 1.0f : (x[i] < 0 ? -1.0f : 0.0f);
      return;
    case UnaryOp::Log:
      for (int64_t i = 0; i < n; ++i) y[i] = std::log(x[i]);
      return;
    case UnaryOp::Expm1:
      for (int64_t i = 0; i < n; ++i) y[i] = std::expm1(x[i]);
      return;
    case UnaryOp::Log1p:
      for (int64_t i = 0; i < n; ++i) y[i] = std::log1p(x[i]);
      return;
    case UnaryOp::Sin:
      for (int64_t i = 0; i < n; ++i) y[i] = std::sin(x[i]);
      return;
    case UnaryOp::Cos:
      for (int64_t i = 0; i < n; ++i) y[i] = std::cos(x[i]);
      return;
    case UnaryOp::Tan:
      for (int64_t i = 0; i < n; ++i) y[i] = std::tan(x[i]);
      return;
    case UnaryOp::Asin:
      for (int64_t i = 0; i < n; ++i) y[i] = std::asin(x[i]);
      return;
    case UnaryOp::Acos:
      for (int64_t i = 0; i < n; ++i) y[i] = std::acos(x[i]);
      return;
    case UnaryOp::Atan:
      for (int64_t i = 0; i < n; ++i) y[i] = std::atan(x[i]);
      return;
    case UnaryOp::Sinh:
      for (int64_t i = 0; i < n; ++i) y[i] = std::sinh(x[i]);
      return;
    case UnaryOp::Cosh:
      for (int64_t i = 0; i < n; ++i) y[i] = std::cosh(x[i]);
      return;
    default: return;
  }
}

KILN_SIMD_CLONES
void run_binary(ElementwiseOp op, const float* a, const float* b, float* y, int64_t n) {
  switch (op) {
    case ElementwiseOp::Add:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
      return;
    case ElementwiseOp::Sub:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] - b[i];
      return;
    case ElementwiseOp::Mul:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
      return;
    case ElementwiseOp::Div:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i];
      return;
    case ElementwiseOp::Pow:
      for (int64_t i = 0; i < n; ++i) y[i] = std::pow(a[i], b[i]);
      return;
    case ElementwiseOp::Max:
      for (int64_t i = 0; i < n; ++i)
        y[i] = (a[i] != a[i] || b[i] != b[i]) ? NAN : (a[i] > b[i] ? a[i] : b[i]);
      return;
    case ElementwiseOp::Min:
      for (int64_t i = 0; i < n; ++i)
        y[i] = (a[i] != a[i] || b[i] != b[i]) ? NAN : (a[i] < b[i] ? a[i] : b[i]);
      return;
    default: return;
  }
}

/// y = a ** e for the exponents torch also computes without pow; false for any other e.
KILN_SIMD_CLONES
bool run_pow_scalar(const float* a, float e, float* y, int64_t n) {
  if (e == 2.0f) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] * a[i];
  } else if (e == 3.0f) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] * a[i] * a[i];
  } else if (e == 0.5f) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(a[i]);
  } else if (e == -1.0f) {
    for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / a[i];
  } else if (e == 1.0f) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i];
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool arithmetic_ok(const PointwiseInstr& in, std::string* why) {
  switch (in.kind) {
    case LayerKind::Elementwise:
      if (!elementwise_ok(static_cast<ElementwiseOp>(in.op))) {
        return refuse(why, std::string("elementwise ") + elementwise_op_name(ElementwiseOp(in.op)));
      }
      if (in.operands.size() != 2) return refuse(why, "an elementwise step without 2 operands");
      return true;
    case LayerKind::Activation:
      if (in.operands.size() != 1) return refuse(why, "an activation step without 1 operand");
      return true;
    case LayerKind::Unary:
      if (!unary_ok(static_cast<UnaryOp>(in.op))) {
        return refuse(why, std::string("unary ") + unary_op_name(static_cast<UnaryOp>(in.op)));
      }
      if (in.operands.size() != 1) return refuse(why, "a unary step without 1 operand");
      return true;
    default: return refuse(why, std::string("a ") + layer_kind_name(in.kind) + " step");
  }
}

void run_arithmetic(const PointwiseInstr& in, const float* const* x, const float* scalar1, float* y,
                    int64_t n) {
  switch (in.kind) {
    case LayerKind::Elementwise: {
      const auto op = static_cast<ElementwiseOp>(in.op);
      if (op == ElementwiseOp::Pow && scalar1 != nullptr && run_pow_scalar(x[0], *scalar1, y, n)) return;
      run_binary(op, x[0], x[1], y, n);
      return;
    }
    case LayerKind::Activation: run_activation(in.activation, x[0], y, n); return;
    case LayerKind::Unary: run_unary(static_cast<UnaryOp>(in.op), x[0], y, n); return;
    default: return;
  }
}

}  // namespace kiln::engine::cpu::fast
