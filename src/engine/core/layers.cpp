#include "kiln/engine/layers.h"

#include <type_traits>

namespace kiln::engine {
namespace {
template <typename T, size_t N>
const char* name_of(const char* const (&names)[N], T value) {
  size_t i = static_cast<size_t>(value);
  return i < N ? names[i] : "?";
}
// The variant order must follow LayerKind.
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(LayerKind::Convolution), LayerParams>,
                             ConvolutionParams>);
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(LayerKind::NonZero), LayerParams>,
                             NonZeroParams>);
static_assert(std::variant_size_v<LayerParams> == kNumLayerKinds);
}  // namespace

const char* layer_kind_name(LayerKind kind) {
  static const char* const kNames[] = {
      "constant", "convolution", "matrix_multiply", "elementwise", "activation", "unary", "reduce", "softmax",
      "normalization", "shuffle", "concat", "slice", "gather", "scatter", "pooling", "resize", "select", "cast",
      "shape", "fill", "topk", "cumulative", "padding", "attention", "nonzero", "fused_pointwise"};
  return name_of(kNames, kind);
}

const char* elementwise_op_name(ElementwiseOp op) {
  static const char* const kNames[] = {"add", "sub", "mul", "div", "floor_div", "trunc_div", "mod", "pow", "max",
                                       "min", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor"};
  return name_of(kNames, op);
}

bool is_comparison(ElementwiseOp op) { return op >= ElementwiseOp::Equal && op <= ElementwiseOp::GreaterEqual; }
bool is_logical(ElementwiseOp op) { return op >= ElementwiseOp::And; }

const char* activation_kind_name(ActivationKind kind) {
  static const char* const kNames[] = {"relu", "sigmoid", "tanh", "gelu_erf", "gelu_tanh", "silu", "hardswish",
                                       "hardsigmoid", "leaky_relu", "elu", "selu", "softplus", "softsign", "clip",
                                       "mish"};
  return name_of(kNames, kind);
}

const char* unary_op_name(UnaryOp op) {
  static const char* const kNames[] = {"exp", "log", "sqrt", "rsqrt", "abs", "neg", "recip", "erf", "sin",
                                       "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "floor", "ceil",
                                       "round", "sign", "not", "expm1", "log1p", "isnan", "isinf"};
  return name_of(kNames, op);
}

const char* reduce_op_name(ReduceOp op) {
  static const char* const kNames[] = {"sum", "mean", "max", "min", "prod", "any", "all", "argmax", "argmin"};
  return name_of(kNames, op);
}

}  // namespace kiln::engine
