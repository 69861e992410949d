// Activation decompositions into elementwise Core ATen ops.

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;

// silu(x) = x * sigmoid(x)
bool decompose_silu(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  ir::Value* x = tensor_arg(*n, "self");
  replace_node(g, n, {b.mul(x, b.unary("aten.sigmoid.default", x))});
  return true;
}

// hardswish(x) = x * clamp(x + 3, 0, 6) / 6
bool decompose_hardswish(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  ir::Value* x = tensor_arg(*n, "self");
  replace_node(g, n, {b.mul(x, b.div_scalar(b.clamp(b.add_scalar(x, 3.0), 0.0, 6.0), 6.0))});
  return true;
}

// hardsigmoid(x) = clamp(x + 3, 0, 6) / 6
bool decompose_hardsigmoid(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  ir::Value* x = tensor_arg(*n, "self");
  replace_node(g, n, {b.div_scalar(b.clamp(b.add_scalar(x, 3.0), 0.0, 6.0), 6.0)});
  return true;
}

// mish(x) = x * tanh(softplus(x))
bool decompose_mish(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  ir::Value* x = tensor_arg(*n, "self");
  ir::Value* softplus = b.op("aten.softplus.default",
                             {named("self", Argument::tensor(x)), named("beta", Argument::int_(1)),
                              named("threshold", Argument::int_(20))},
                             with_sizes(x->meta(), x->meta().sizes), "softplus");
  replace_node(g, n, {b.mul(x, b.unary("aten.tanh.default", softplus))});
  return true;
}

// relu6(x) = clamp(x, 0, 6)
bool decompose_relu6(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  replace_node(g, n, {b.clamp(tensor_arg(*n, "self"), 0.0, 6.0)});
  return true;
}

// hardtanh(x, lo, hi) = clamp(x, lo, hi)
bool decompose_hardtanh(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  replace_node(g, n, {b.clamp(tensor_arg(*n, "self"), float_arg(*n, "min_val", -1.0), float_arg(*n, "max_val", 1.0))});
  return true;
}

// glu(x, dim) = a * sigmoid(b) where a, b are the two halves of x along dim (static size needed).
bool decompose_glu(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const int64_t dim = normalize_dim(int_arg(*n, "dim", -1), x->meta().rank(), *n);
  auto size = x->meta().sizes[static_cast<size_t>(dim)].as_int();
  if (!size || *size % 2 != 0) return false;
  Builder b(g, n);
  const int64_t half = *size / 2;
  ir::Value* first = b.slice(x, dim, 0, half);
  ir::Value* second = b.slice(x, dim, half, *size);
  replace_node(g, n, {b.mul(first, b.unary("aten.sigmoid.default", second))});
  return true;
}

}  // namespace kiln::lowering::detail
