// full_like/zeros_like/ones_like, new_full/new_zeros/new_ones, zeros/ones → aten.full.default.

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;

namespace {

ir::Value* emit_full(Builder& b, ir::Node* n, Argument size, Argument fill, DType dtype) {
  return b.op("aten.full.default",
              {named("size", std::move(size)), named("fill_value", std::move(fill)),
               named("dtype", Argument::scalar_type(dtype), true), named("layout", Argument::none(), true),
               named("device", Argument::none(), true), named("pin_memory", Argument::none(), true)},
              n->output(0)->meta(), "full");
}

DType dtype_or(const ir::Node& n, DType fallback) {
  return arg_is_none(n, "dtype") ? fallback : n.arg("dtype").as_scalar_type();
}

}  // namespace

bool decompose_full_like(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  auto sizes = size_args(g, n, x, x->meta().sizes);
  if (!sizes) return false;
  const std::string& name = n->target().name;
  const DType dtype = dtype_or(*n, x->meta().dtype);
  Argument fill = name == "full_like" ? n->arg("fill_value") : Argument::int_(name == "ones_like" ? 1 : 0);
  Builder b(g, n);
  replace_node(g, n, {emit_full(b, n, sym_ints_argument(*sizes), fill, dtype)});
  return true;
}

bool decompose_new_full(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const std::string& name = n->target().name;
  const DType dtype = dtype_or(*n, x->meta().dtype);
  Argument fill = name == "new_full" ? n->arg("fill_value") : Argument::int_(name == "new_ones" ? 1 : 0);
  Builder b(g, n);
  replace_node(g, n, {emit_full(b, n, n->arg("size"), fill, dtype)});
  return true;
}

bool decompose_zeros_ones(ir::Graph& g, ir::Node* n) {
  const DType dtype = dtype_or(*n, DType::Float32);
  Builder b(g, n);
  replace_node(g, n, {emit_full(b, n, n->arg("size"), Argument::int_(n->target().name == "ones" ? 1 : 0), dtype)});
  return true;
}

}  // namespace kiln::lowering::detail
