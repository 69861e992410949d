#include "engine/ops/scalar_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/support/error.h"
#include "kiln/support/host_math.h"

namespace kiln::engine::ops {
namespace {

/// A comparison's or logical op's 1 or 0 (any other op: 0).
template <class T>
T truth(ElementwiseOp op, T a, T b) {
  switch (op) {
    case ElementwiseOp::Equal: return a == b;
    case ElementwiseOp::NotEqual: return a != b;
    case ElementwiseOp::Less: return a < b;
    case ElementwiseOp::LessEqual: return a <= b;
    case ElementwiseOp::Greater: return a > b;
    case ElementwiseOp::GreaterEqual: return a >= b;
    case ElementwiseOp::And: return (a != 0) && (b != 0);
    case ElementwiseOp::Or: return (a != 0) || (b != 0);
    case ElementwiseOp::Xor: return (a != 0) != (b != 0);
    default: return 0;
  }
}

}  // namespace

double apply_activation(const ActivationParams& p, double x) {
  switch (p.kind) {
    case ActivationKind::Relu: return x < 0 ? 0.0 : x;  // NaN propagates, as torch.relu
    case ActivationKind::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case ActivationKind::Tanh: return std::tanh(x);
    case ActivationKind::GeluErf: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ActivationKind::GeluTanh: {
      double c = std::sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
    }
    case ActivationKind::Silu: return x / (1.0 + std::exp(-x));
    case ActivationKind::HardSwish: return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    case ActivationKind::HardSigmoid: return std::min(std::max(p.alpha * x + p.beta, 0.0), 1.0);
    case ActivationKind::LeakyRelu: return x >= 0 ? x : p.alpha * x;
    case ActivationKind::Elu: return x > 0 ? x : p.alpha * (std::exp(x) - 1.0);
    case ActivationKind::Selu: {
      const double alpha = 1.6732632423543772, scale = 1.0507009873554805;
      return scale * (x > 0 ? x : alpha * (std::exp(x) - 1.0));
    }
    case ActivationKind::Softplus: {
      double beta = p.beta == 0 ? 1.0 : p.beta;
      double threshold = p.alpha == 0 ? 20.0 : p.alpha;
      return beta * x > threshold ? x : std::log1p(std::exp(beta * x)) / beta;
    }
    case ActivationKind::Softsign: return x / (1.0 + std::fabs(x));
    case ActivationKind::Clip: return std::min(std::max(x, p.alpha), p.beta);
    case ActivationKind::Mish: return x * std::tanh(std::log1p(std::exp(x)));
  }
  return x;
}

double apply_unary(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::Exp: return std::exp(x);
    case UnaryOp::Log: return std::log(x);
    case UnaryOp::Sqrt: return std::sqrt(x);
    case UnaryOp::Rsqrt: return 1.0 / std::sqrt(x);
    case UnaryOp::Abs: return std::fabs(x);
    case UnaryOp::Neg: return -x;
    case UnaryOp::Recip: return 1.0 / x;
    case UnaryOp::Erf: return std::erf(x);
    case UnaryOp::Sin: return std::sin(x);
    case UnaryOp::Cos: return std::cos(x);
    case UnaryOp::Tan: return std::tan(x);
    case UnaryOp::Asin: return std::asin(x);
    case UnaryOp::Acos: return std::acos(x);
    case UnaryOp::Atan: return std::atan(x);
    case UnaryOp::Sinh: return std::sinh(x);
    case UnaryOp::Cosh: return std::cosh(x);
    case UnaryOp::Floor: return std::floor(x);
    case UnaryOp::Ceil: return std::ceil(x);
    case UnaryOp::Round: return std::nearbyint(x);  // half to even, like torch.round
    case UnaryOp::Sign: return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
    case UnaryOp::Not: return x == 0 ? 1.0 : 0.0;
    case UnaryOp::Expm1: return std::expm1(x);
    case UnaryOp::Log1p: return std::log1p(x);
    case UnaryOp::IsNan: return std::isnan(x) ? 1.0 : 0.0;
    case UnaryOp::IsInf: return std::isinf(x) ? 1.0 : 0.0;
  }
  return x;
}

double apply_elementwise(ElementwiseOp op, double a, double b, DType dtype) {
  bool integral = is_integral(dtype);
  switch (op) {
    case ElementwiseOp::Add: return a + b;
    case ElementwiseOp::Sub: return a - b;
    case ElementwiseOp::Mul: return a * b;
    case ElementwiseOp::Div:
    case ElementwiseOp::TruncDiv:
      if (integral) {
        KILN_CHECK(b != 0, InvalidInput, "integer division by zero");
        return std::trunc(a / b);
      }
      return op == ElementwiseOp::Div ? a / b : std::trunc(a / b);
    case ElementwiseOp::FloorDiv:
      if (integral) KILN_CHECK(b != 0, InvalidInput, "integer division by zero");
      return std::floor(a / b);
    case ElementwiseOp::Mod: {
      if (integral) KILN_CHECK(b != 0, InvalidInput, "integer modulo by zero");
      double r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    case ElementwiseOp::Pow: return std::pow(a, b);
    case ElementwiseOp::Max: return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b);
    case ElementwiseOp::Min: return (std::isnan(a) || std::isnan(b)) ? NAN : std::min(a, b);
    default: return truth(op, a, b);
  }
}

namespace {

/// a op b modulo 2^64 (two's complement wrap-around, without signed overflow).
int64_t wrap(uint64_t v) { return static_cast<int64_t>(v); }

int64_t int_pow(int64_t a, int64_t e) {
  KILN_CHECK(e >= 0, InvalidInput, "integer pow with a negative exponent ", e);
  uint64_t result = 1, base = static_cast<uint64_t>(a);
  for (; e > 0; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return wrap(result);
}

}  // namespace

int64_t apply_elementwise_int(ElementwiseOp op, int64_t a, int64_t b) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case ElementwiseOp::Add: return wrap(ua + ub);
    case ElementwiseOp::Sub: return wrap(ua - ub);
    case ElementwiseOp::Mul: return wrap(ua * ub);
    case ElementwiseOp::Div:
    case ElementwiseOp::TruncDiv:
      KILN_CHECK(b != 0, InvalidInput, "integer division by zero");
      return b == -1 ? wrap(0 - ua) : a / b;
    case ElementwiseOp::FloorDiv: {
      KILN_CHECK(b != 0, InvalidInput, "integer division by zero");
      if (b == -1) return wrap(0 - ua);
      const int64_t q = a / b;
      return a % b != 0 && ((a < 0) != (b < 0)) ? q - 1 : q;
    }
    case ElementwiseOp::Mod: {
      KILN_CHECK(b != 0, InvalidInput, "integer modulo by zero");
      if (b == -1) return 0;
      const int64_t r = a % b;
      return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
    case ElementwiseOp::Pow: return int_pow(a, b);
    case ElementwiseOp::Max: return std::max(a, b);
    case ElementwiseOp::Min: return std::min(a, b);
    default: return truth(op, a, b);
  }
}

IntRange int_range(DType dtype) {
  switch (dtype) {
    case DType::Int64: return {std::numeric_limits<int64_t>::lowest(), std::numeric_limits<int64_t>::max()};
    case DType::Int32: return {std::numeric_limits<int32_t>::lowest(), std::numeric_limits<int32_t>::max()};
    case DType::Int16: return {std::numeric_limits<int16_t>::lowest(), std::numeric_limits<int16_t>::max()};
    case DType::Int8: return {std::numeric_limits<int8_t>::lowest(), std::numeric_limits<int8_t>::max()};
    case DType::UInt8: return {0, 255};
    default: KILN_FAIL(Internal, "int_range of ", dtype_name(dtype));
  }
}

int64_t apply_unary_int(UnaryOp op, int64_t x) {
  const auto ux = static_cast<uint64_t>(x);
  switch (op) {
    case UnaryOp::Abs: return x < 0 ? wrap(0 - ux) : x;
    case UnaryOp::Neg: return wrap(0 - ux);
    case UnaryOp::Sign: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    default: KILN_FAIL(InvalidInput, "unary ", unary_op_name(op), " on an integer");
  }
}

double round_to(DType dtype, double v) {
  uint8_t element[8];
  store_element(element, dtype, 0, v);
  return load_element(element, dtype, 0);
}

}  // namespace kiln::engine::ops
