#include "kiln/engine/layers.h"

#include <algorithm>
#include <type_traits>

#include "kiln/support/checked_math.h"

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
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(LayerKind::Reformat), LayerParams>,
                             ReformatParams>);
static_assert(std::variant_size_v<LayerParams> == kNumLayerKinds);

int64_t block_of(TensorFormat format) {
  return format == TensorFormat::Blocked8c ? 8 : format == TensorFormat::Blocked16c ? 16 : 1;
}
}  // namespace

const char* layer_kind_name(LayerKind kind) {
  static const char* const kNames[] = {
      "constant", "convolution", "matrix_multiply", "elementwise", "activation", "unary", "reduce", "softmax",
      "normalization", "shuffle", "concat", "slice", "gather", "scatter", "pooling", "resize", "select", "cast",
      "shape", "fill", "topk", "cumulative", "padding", "attention", "nonzero", "fused_pointwise", "reformat"};
  return name_of(kNames, kind);
}

const char* tensor_format_name(TensorFormat format) {
  static const char* const kNames[] = {"plain", "blocked8c", "blocked16c", "channels_last"};
  return name_of(kNames, format);
}

bool format_applies(TensorFormat format, size_t rank) {
  if (format == TensorFormat::Plain) return true;
  return static_cast<int>(format) < kNumTensorFormats && rank >= 3 && rank <= 5;
}

int64_t format_numel(TensorFormat format, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = std::max<int64_t>(dims[i], 0);
    if (i == 1) {
      int64_t b = block_of(format);
      d = (d + b - 1) / b * b;
    }
    n = checked_mul(n, d, "the elements of a tensor");
  }
  return n;
}

int64_t format_offset(TensorFormat format, const std::vector<int64_t>& dims, const std::vector<int64_t>& index) {
  size_t rank = dims.size();
  if (format == TensorFormat::Plain || rank < 3) {
    int64_t off = 0;
    for (size_t i = 0; i < rank; ++i) off = off * dims[i] + index[i];
    return off;
  }
  int64_t spatial = 0, spatial_size = 1;  // flat spatial index and size
  for (size_t i = 2; i < rank; ++i) {
    spatial = spatial * dims[i] + index[i];
    spatial_size *= dims[i];
  }
  int64_t n = index[0], c = index[1], channels = dims[1];
  if (format == TensorFormat::ChannelsLast) return (n * spatial_size + spatial) * channels + c;
  int64_t b = block_of(format), blocks = (channels + b - 1) / b;
  return ((n * blocks + c / b) * spatial_size + spatial) * b + c % b;
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
