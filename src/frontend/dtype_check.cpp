#include "frontend/dtype_check.h"

#include <set>

#include "kiln/ir/higher_order.h"
#include "kiln/support/dtype_promotion.h"
#include "kiln/support/error.h"

namespace kiln::frontend {
namespace {

using ir::Argument;

/// One operand of type promotion: a tensor (dtype, rank) or a Python scalar (bool, int or float).
struct Operand {
  bool tensor = false;
  DType dtype = DType::Float32;
  int64_t rank = 0;
};

std::optional<Operand> operand(const ir::Node& node, const char* name) {
  const Argument* a = node.find_arg(name);
  if (a == nullptr) return std::nullopt;
  switch (a->kind()) {
    case Argument::Kind::Tensor: {
      const ir::Value* v = a->as_tensor();
      if (v == nullptr || !v->is_tensor()) return std::nullopt;
      return Operand{true, v->meta().dtype, v->meta().rank()};
    }
    case Argument::Kind::Bool: return Operand{false, DType::Bool, 0};
    case Argument::Kind::Int:
    case Argument::Kind::SymInt: return Operand{false, DType::Int64, 0};
    case Argument::Kind::Float:
    case Argument::Kind::SymFloat: return Operand{false, DType::Float32, 0};
    default: return std::nullopt;
  }
}

int category(DType d) { return d == DType::Bool ? 0 : (is_floating(d) ? 2 : 1); }

/// torch's result type of two operands: tensors promote (promote_types); a scalar widens a tensor only when
/// of a higher category (an int scalar makes a bool tensor int64, a float scalar an integral one float32).
DType result_type(const Operand& a, const Operand& b) {
  if (a.tensor && b.tensor) return promote_types(a.dtype, a.rank, b.dtype, b.rank);
  if (!a.tensor && !b.tensor) return promote_types(a.dtype, 0, b.dtype, 0);
  const Operand& t = a.tensor ? a : b;
  const Operand& s = a.tensor ? b : a;
  return category(s.dtype) > category(t.dtype) ? s.dtype : t.dtype;
}

// Ops whose output 0 has the dtype of their first tensor argument (movement, normalization, linear algebra on
// one dtype, pooling, activations defined on every dtype).
const std::set<std::string>& same_as_input_ops() {
  static const std::set<std::string> ops = {
      "aten.view", "aten.reshape", "aten._unsafe_view", "aten.permute", "aten.transpose", "aten.t",
      "aten.expand", "aten.flatten", "aten.unflatten", "aten.squeeze", "aten.unsqueeze", "aten.slice",
      "aten.select", "aten.contiguous", "aten.clone", "aten.narrow", "aten.split", "aten.split_with_sizes",
      "aten.chunk", "aten.unbind", "aten.alias", "aten.detach", "aten.repeat", "aten.flip", "aten.roll",
      "aten.index_select", "aten.gather", "aten.constant_pad_nd", "aten.pad", "aten.max_pool1d",
      "aten.max_pool2d", "aten.max_pool3d", "aten.max_pool2d_with_indices", "aten.avg_pool1d", "aten.avg_pool2d",
      "aten.avg_pool3d", "aten.adaptive_avg_pool1d", "aten.adaptive_avg_pool2d", "aten._adaptive_avg_pool2d",
      "aten.adaptive_avg_pool3d", "aten.conv1d", "aten.conv2d", "aten.conv3d", "aten.convolution",
      "aten._convolution", "aten.conv_transpose1d", "aten.conv_transpose2d", "aten.conv_transpose3d",
      "aten.linear", "aten.matmul", "aten.mm", "aten.bmm", "aten.addmm", "aten.batch_norm",
      "aten._native_batch_norm_legit_no_training", "aten._native_batch_norm_legit", "aten.layer_norm",
      "aten.native_layer_norm", "aten.group_norm", "aten.native_group_norm", "aten.relu", "aten.relu6",
      "aten.neg", "aten.dropout", "aten.native_dropout",
      "aten.pixel_shuffle", "aten.upsample_nearest2d", "aten.upsample_bilinear2d", "aten.embedding",
      "aten.scaled_dot_product_attention", "aten.tril", "aten.triu", "aten.masked_fill", "aten.index_put",
      "aten.slice_scatter", "aten.select_scatter", "aten.copy", "aten.zeros_like", "aten.ones_like",
      "aten.empty_like", "aten.full_like", "aten.rand_like", "aten.randn_like"};
  return ops;
}

// Pointwise math that computes in floating point: a floating input keeps its dtype, an integral one gives
// float32 (the default dtype).
const std::set<std::string>& float_math_ops() {
  static const std::set<std::string> ops = {
      "aten.exp", "aten.log", "aten.log2", "aten.log10", "aten.log1p", "aten.expm1", "aten.sqrt", "aten.rsqrt",
      "aten.sin", "aten.cos", "aten.tan", "aten.tanh", "aten.sigmoid", "aten.erf", "aten.reciprocal",
      "aten.asin", "aten.acos", "aten.atan", "aten.sinh", "aten.cosh", "aten.gelu", "aten.silu",
      "aten.hardswish", "aten.hardsigmoid", "aten.elu", "aten.softmax", "aten.log_softmax"};
  return ops;
}

// Binary ops whose result is the promoted type of `self` and `other`.
const std::set<std::string>& promoting_binary_ops() {
  static const std::set<std::string> ops = {"aten.add",     "aten.sub",       "aten.mul",
                                            "aten.rsub",    "aten.maximum",   "aten.minimum",
                                            "aten.remainder", "aten.fmod",    "aten.floor_divide",
                                            "aten.bitwise_and", "aten.bitwise_or", "aten.bitwise_xor"};
  return ops;
}

const std::set<std::string>& bool_ops() {
  static const std::set<std::string> ops = {"aten.eq",          "aten.ne",         "aten.lt",          "aten.le",
                                            "aten.gt",          "aten.ge",         "aten.logical_not", "aten.logical_and",
                                            "aten.logical_or",  "aten.logical_xor", "aten.isnan",      "aten.isinf",
                                            "aten.isfinite"};
  return ops;
}

const std::set<std::string>& index_ops() {
  static const std::set<std::string> ops = {"aten.argmax", "aten.argmin", "aten.nonzero"};
  return ops;
}

// Ops whose `dtype` argument, when given, is the output dtype.
const std::set<std::string>& dtype_arg_ops() {
  static const std::set<std::string> ops = {"aten._to_copy", "aten.to",   "aten.full",   "aten.zeros",
                                            "aten.ones",     "aten.empty", "aten.arange", "aten.zeros_like",
                                            "aten.ones_like", "aten.full_like", "aten.empty_like", "aten.softmax",
                                            "aten.log_softmax"};
  return ops;
}

std::optional<DType> first_tensor_dtype(const ir::Node& node) {
  for (const char* name : {"self", "input", "x", "a"}) {
    auto o = operand(node, name);
    if (o && o->tensor) return o->dtype;
  }
  return std::nullopt;
}

}  // namespace

std::optional<DType> infer_output_dtype(const ir::Node& node) {
  if (node.target().ns != "aten" || node.outputs().empty() || !node.outputs()[0]->is_tensor()) return std::nullopt;
  const std::string packet = node.target().packet();
  if (dtype_arg_ops().count(packet)) {
    const Argument* d = node.find_arg("dtype");
    if (d != nullptr && d->kind() == Argument::Kind::ScalarType) return d->as_scalar_type();
  }
  if (same_as_input_ops().count(packet)) return first_tensor_dtype(node);
  if (bool_ops().count(packet)) return DType::Bool;
  if (index_ops().count(packet)) return DType::Int64;
  if (float_math_ops().count(packet)) {
    auto in = first_tensor_dtype(node);
    if (!in) return std::nullopt;
    return is_floating(*in) ? *in : DType::Float32;
  }
  if (promoting_binary_ops().count(packet) || packet == "aten.div" || packet == "aten.where") {
    auto a = operand(node, "self");
    auto b = operand(node, "other");
    if (!a || !b) return std::nullopt;
    DType r = result_type(*a, *b);
    // True division of integers gives the default floating type; with a rounding mode it stays integral.
    const Argument* mode = node.find_arg("rounding_mode");
    if (packet == "aten.div" && !is_floating(r) && (mode == nullptr || mode->is_none())) r = DType::Float32;
    return r;
  }
  if (packet == "aten.cat" || packet == "aten.concat") {
    const Argument* t = node.find_arg("tensors");
    if (t == nullptr || t->kind() != Argument::Kind::Tensors) return std::nullopt;
    std::optional<Operand> acc;
    for (const ir::Value* v : t->as_tensors()) {
      if (v == nullptr || !v->is_tensor()) return std::nullopt;
      Operand o{true, v->meta().dtype, v->meta().rank()};
      acc = acc ? Operand{true, result_type(*acc, o), std::max(acc->rank, o.rank)} : o;
    }
    if (acc) return acc->dtype;
  }
  return std::nullopt;
}

void check_declared_dtypes(const ir::Graph& graph) {
  for (const ir::Node* node : graph.nodes()) {
    if (node->subgraph()) check_declared_dtypes(*node->subgraph());
    for (const ir::Graph* nested : ir::nested_graphs(*node)) check_declared_dtypes(*nested);
    // Autocast regions compute in the region's dtype whatever the inputs are; nodes with unreadable arguments
    // are not checked either.
    if (node->metadata().count(ir::kAutocastKey) || node->metadata().count(ir::kUnsupportedArgumentKey)) continue;
    std::optional<DType> computed = infer_output_dtype(*node);
    if (!computed) continue;
    const ir::Value* out = node->outputs()[0];
    KILN_CHECK(out->meta().dtype == *computed, InvalidInput, "node '", node->name(), "' (",
               node->target().to_string(), "): output '", out->name(), "' is declared ", dtype_name(out->meta().dtype),
               " but the op computes ", dtype_name(*computed),
               " from its inputs (model.json's dtypes disagree with the program)");
  }
}

}  // namespace kiln::frontend
