// Symbolic integers: sym_size.int and Python integer arithmetic on SymInts (_operator.mul/add/sub/floordiv/mod).
// A SymInt becomes a 1-element Int64 shape tensor (a constant when its value is known at build time).

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/shape.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

Outputs sym_size(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::dim_of(ctx, a.tensor(ctx, "self"), a.int_("dim"))};
}

template <engine::ElementwiseOp Op>
Outputs sym_arith(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::sym_int_tensor(ctx, impl::sym_int_arith(ctx, a.sym_int(ctx, "a"), a.sym_int(ctx, "b"), Op))};
}

// Python ints only (SymFloat arithmetic stays in torch).
bool int_operands(const ir::Node& n, const settings::CompilationSettings&) {
  for (const char* k : {"a", "b"}) {
    const ir::Argument* arg = n.find_arg(k);
    if (arg == nullptr) return false;
    if (arg->kind() != ir::Argument::Kind::Int && arg->kind() != ir::Argument::Kind::SymInt) return false;
  }
  return true;
}

}  // namespace

void register_sym_int_converters(ConverterRegistry& r) {
  using detail::add;
  using engine::ElementwiseOp;
  add(r, {"aten.sym_size.int"}, sym_size, true);
  add(r, {"_operator.mul"}, sym_arith<ElementwiseOp::Mul>, true, int_operands);
  add(r, {"_operator.add"}, sym_arith<ElementwiseOp::Add>, true, int_operands);
  add(r, {"_operator.sub"}, sym_arith<ElementwiseOp::Sub>, true, int_operands);
  add(r, {"_operator.floordiv"}, sym_arith<ElementwiseOp::FloorDiv>, true, int_operands);
  add(r, {"_operator.mod"}, sym_arith<ElementwiseOp::Mod>, true, int_operands);
}

}  // namespace kiln::conversion
