// Binary arithmetic, comparisons, logical ops, where, clamp / clamp_min / clamp_max (tensor and scalar forms).

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/pointwise.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using engine::ElementwiseOp;
using impl::Operand;

// a + alpha * b (add/sub with alpha).
Outputs add_sub(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a, ElementwiseOp op) {
  Operand x = impl::operand(ctx, a, "self"), y = impl::operand(ctx, a, "other");
  const DType t = detail::out_dtype(n);
  const ir::Argument* alpha = a.raw("alpha");
  if (alpha != nullptr && !alpha->is_none()) {
    const double v = a.float_("alpha");
    if (v != 1.0) {
      y = Operand::of(impl::binary(ctx, y, Operand::of(v, alpha->kind() == ir::Argument::Kind::Float),
                                   ElementwiseOp::Mul, t));
    }
  }
  return {impl::binary(ctx, x, y, op, t)};
}

Outputs add_op(ConversionContext& c, const ir::Node& n, const ConverterArgs& a) {
  return add_sub(c, n, a, ElementwiseOp::Add);
}
Outputs sub_op(ConversionContext& c, const ir::Node& n, const ConverterArgs& a) {
  return add_sub(c, n, a, ElementwiseOp::Sub);
}

Outputs rsub(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  Operand x = impl::operand(ctx, a, "self"), y = impl::operand(ctx, a, "other");
  const DType t = detail::out_dtype(n);
  const double alpha = a.float_("alpha", 1.0);
  if (alpha != 1.0) x = Operand::of(impl::binary(ctx, x, Operand::of(alpha, true), ElementwiseOp::Mul, t));
  return {impl::binary(ctx, y, x, ElementwiseOp::Sub, t)};
}

template <ElementwiseOp Op>
Outputs arith(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  return {impl::binary(ctx, impl::operand(ctx, a, "self"), impl::operand(ctx, a, "other"), Op, detail::out_dtype(n))};
}

Outputs div(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const std::string mode = a.string("rounding_mode", "");
  const Operand x = impl::operand(ctx, a, "self"), y = impl::operand(ctx, a, "other");
  const DType t = detail::out_dtype(n);
  if (mode.empty()) return {impl::binary(ctx, x, y, ElementwiseOp::Div, t)};
  KILN_CHECK(mode == "trunc" || mode == "floor", InvalidInput, ctx.current_node, ": rounding_mode '", mode, "'");
  if (!is_floating(t)) {
    return {impl::binary(ctx, x, y, mode == "floor" ? ElementwiseOp::FloorDiv : ElementwiseOp::TruncDiv, t)};
  }
  engine::Tensor* q = impl::binary(ctx, x, y, ElementwiseOp::Div, t);
  engine::Tensor* down = impl::unary(ctx, q, engine::UnaryOp::Floor, false);
  if (mode == "floor") return {down};
  // trunc rounds toward zero: ceil below zero, floor above.
  engine::Tensor* up = impl::unary(ctx, q, engine::UnaryOp::Ceil, false);
  engine::Tensor* negative = impl::binary(ctx, Operand::of(q), Operand::of(0.0, true), ElementwiseOp::Less, t);
  return {impl::where(ctx, negative, Operand::of(up), Operand::of(down))};
}

Outputs pow_(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  return {impl::binary(ctx, impl::operand(ctx, a, "self"), impl::operand(ctx, a, "exponent"), ElementwiseOp::Pow,
                       detail::out_dtype(n))};
}

template <ElementwiseOp Op>
Outputs compare(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::binary(ctx, impl::operand(ctx, a, "self"), impl::operand(ctx, a, "other"), Op)};
}

template <ElementwiseOp Op>
Outputs logical(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), DType::Bool);
  engine::Tensor* y = impl::cast(ctx, a.tensor(ctx, "other"), DType::Bool);
  return {ctx.net.add_elementwise(ctx.name("logical"), x, y, Op)};
}

Outputs logical_not(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::unary(ctx, impl::cast(ctx, a.tensor(ctx, "self"), DType::Bool), engine::UnaryOp::Not, false)};
}

Outputs where_op(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* y = impl::where(ctx, a.tensor(ctx, "condition"), impl::operand(ctx, a, "self"),
                                  impl::operand(ctx, a, "other"));
  return {impl::cast(ctx, y, detail::out_dtype(n))};
}

Outputs clamp_op(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), detail::out_dtype(n));
  std::optional<double> lo, hi;
  if (a.has("min")) lo = a.float_("min");
  if (a.has("max")) hi = a.float_("max");
  return {impl::clamp(ctx, x, lo, hi)};
}

Outputs clamp_tensor(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const DType t = detail::out_dtype(n);
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), t);
  if (a.has("min")) x = impl::binary(ctx, Operand::of(x), impl::operand(ctx, a, "min"), ElementwiseOp::Max, t);
  if (a.has("max")) x = impl::binary(ctx, Operand::of(x), impl::operand(ctx, a, "max"), ElementwiseOp::Min, t);
  return {x};
}

Outputs masked_fill(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const DType t = detail::out_dtype(n);
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), t);
  Operand value = impl::operand(ctx, a, "value");
  if (value.tensor) value = Operand::of(impl::cast(ctx, value.tensor, t));
  engine::Tensor* y = impl::where(ctx, a.tensor(ctx, "mask"), value.tensor ? value : Operand::of(value.scalar, is_floating(t)),
                                  Operand::of(x));
  return {impl::cast(ctx, y, t)};
}

Outputs square(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  return {impl::binary(ctx, Operand::of(x), Operand::of(x), ElementwiseOp::Mul, detail::out_dtype(n))};
}

// tril/triu on the last two (static) dims: keep element (i, j) when j - i <= k (tril) or >= k (triu).
template <bool Lower>
Outputs triangle(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  KILN_CHECK(x->rank() >= 2, InvalidInput, ctx.current_node, ": tril/triu of a rank-", x->rank(), " tensor");
  const int64_t rows = x->dims()[x->rank() - 2], cols = x->dims()[x->rank() - 1];
  const int64_t k = a.int_("diagonal", 0);
  HostTensor keep(DType::Bool, {rows, cols});
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) keep.set_from_double(i * cols + j, (Lower ? j - i <= k : j - i >= k) ? 1 : 0);
  }
  return {impl::where(ctx, impl::constant(ctx, keep), Operand::of(x), Operand::of(0.0, is_floating(x->dtype())))};
}

bool static_matrix_dims(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* x = n.find_arg("self");
  if (x == nullptr || x->kind() != ir::Argument::Kind::Tensor) return false;
  const ir::TensorMeta& m = x->as_tensor()->meta();
  return m.rank() >= 2 && m.sizes[m.rank() - 1].is_constant() && m.sizes[m.rank() - 2].is_constant();
}

bool bool_operands(const ir::Node& n, const settings::CompilationSettings&) {
  for (const char* k : {"self", "other"}) {
    const ir::Argument* x = n.find_arg(k);
    if (x && x->kind() == ir::Argument::Kind::Tensor && x->as_tensor()->meta().dtype != DType::Bool) return false;
  }
  return true;
}

bool scalar_clamp_bounds(const ir::Node& n, const settings::CompilationSettings&) {
  for (const char* k : {"min", "max"}) {
    const ir::Argument* arg = n.find_arg(k);
    if (arg && !arg->is_none() && arg->kind() == ir::Argument::Kind::Tensor) return false;
  }
  return true;
}

}  // namespace

void register_elementwise_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.add.Tensor", "aten.add.Scalar"}, add_op, true);
  add(r, {"aten.sub.Tensor", "aten.sub.Scalar"}, sub_op, true);
  add(r, {"aten.rsub.Scalar", "aten.rsub.Tensor"}, rsub, true);
  add(r, {"aten.mul.Tensor", "aten.mul.Scalar"}, arith<ElementwiseOp::Mul>, true);
  add(r, {"aten.div.Tensor", "aten.div.Scalar", "aten.div.Tensor_mode", "aten.div.Scalar_mode"}, div, true);
  add(r, {"aten.floor_divide.default"}, arith<ElementwiseOp::FloorDiv>, true);
  add(r, {"aten.remainder.Tensor", "aten.remainder.Scalar"}, arith<ElementwiseOp::Mod>, true);
  add(r, {"aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor"}, pow_, true);
  add(r, {"aten.maximum.default", "aten.max.other"}, arith<ElementwiseOp::Max>, true);
  add(r, {"aten.minimum.default", "aten.min.other"}, arith<ElementwiseOp::Min>, true);
  add(r, {"aten.eq.Tensor", "aten.eq.Scalar"}, compare<ElementwiseOp::Equal>, true);
  add(r, {"aten.ne.Tensor", "aten.ne.Scalar"}, compare<ElementwiseOp::NotEqual>, true);
  add(r, {"aten.lt.Tensor", "aten.lt.Scalar"}, compare<ElementwiseOp::Less>, true);
  add(r, {"aten.le.Tensor", "aten.le.Scalar"}, compare<ElementwiseOp::LessEqual>, true);
  add(r, {"aten.gt.Tensor", "aten.gt.Scalar"}, compare<ElementwiseOp::Greater>, true);
  add(r, {"aten.ge.Tensor", "aten.ge.Scalar"}, compare<ElementwiseOp::GreaterEqual>, true);
  add(r, {"aten.logical_and.default"}, logical<ElementwiseOp::And>, true);
  add(r, {"aten.logical_or.default"}, logical<ElementwiseOp::Or>, true);
  add(r, {"aten.logical_xor.default"}, logical<ElementwiseOp::Xor>, true);
  add(r, {"aten.logical_not.default"}, logical_not, true);
  add(r, {"aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar"}, where_op, true);
  add(r, {"aten.clamp.default", "aten.clamp_min.default", "aten.clamp_max.default"}, clamp_op, true,
      scalar_clamp_bounds);
  add(r, {"aten.clamp.Tensor", "aten.clamp_min.Tensor", "aten.clamp_max.Tensor"}, clamp_tensor, true);
  add(r, {"aten.masked_fill.Scalar", "aten.masked_fill.Tensor"}, masked_fill, true);
  add(r, {"aten.square.default"}, square, true);
  add(r, {"aten.tril.default"}, triangle<true>, true, static_matrix_dims);
  add(r, {"aten.triu.default"}, triangle<false>, true, static_matrix_dims);
  add(r, {"aten.bitwise_and.Tensor", "aten.__and__.Tensor"}, logical<ElementwiseOp::And>, true, bool_operands);
  add(r, {"aten.bitwise_or.Tensor", "aten.__or__.Tensor"}, logical<ElementwiseOp::Or>, true, bool_operands);
  add(r, {"aten.bitwise_xor.Tensor", "aten.__xor__.Tensor"}, logical<ElementwiseOp::Xor>, true, bool_operands);
  add(r, {"aten.bitwise_not.default"}, logical_not, true, bool_operands);
}

}  // namespace kiln::conversion
