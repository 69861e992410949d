// Unary math: exp, log, sqrt, rsqrt, abs, neg, reciprocal, erf, trigonometry, rounding, sign, ...

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/pointwise.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using engine::UnaryOp;

template <UnaryOp Op>
Outputs math(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  return {impl::cast(ctx, impl::unary(ctx, a.tensor(ctx, "self"), Op), detail::out_dtype(n))};
}

// Ops that keep integer types (abs, neg, sign).
template <UnaryOp Op>
Outputs keep_type(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::unary(ctx, a.tensor(ctx, "self"), Op, false)};
}

template <UnaryOp Op>
Outputs predicate(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::unary(ctx, a.tensor(ctx, "self"), Op, true)};
}

}  // namespace

void register_unary_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.exp.default"}, math<UnaryOp::Exp>, true);
  add(r, {"aten.log.default"}, math<UnaryOp::Log>, true);
  add(r, {"aten.sqrt.default"}, math<UnaryOp::Sqrt>, true);
  add(r, {"aten.rsqrt.default"}, math<UnaryOp::Rsqrt>, true);
  add(r, {"aten.reciprocal.default"}, math<UnaryOp::Recip>, true);
  add(r, {"aten.erf.default"}, math<UnaryOp::Erf>, true);
  add(r, {"aten.sin.default"}, math<UnaryOp::Sin>, true);
  add(r, {"aten.cos.default"}, math<UnaryOp::Cos>, true);
  add(r, {"aten.tan.default"}, math<UnaryOp::Tan>, true);
  add(r, {"aten.asin.default"}, math<UnaryOp::Asin>, true);
  add(r, {"aten.acos.default"}, math<UnaryOp::Acos>, true);
  add(r, {"aten.atan.default"}, math<UnaryOp::Atan>, true);
  add(r, {"aten.sinh.default"}, math<UnaryOp::Sinh>, true);
  add(r, {"aten.cosh.default"}, math<UnaryOp::Cosh>, true);
  add(r, {"aten.floor.default"}, math<UnaryOp::Floor>, true);
  add(r, {"aten.ceil.default"}, math<UnaryOp::Ceil>, true);
  add(r, {"aten.round.default"}, math<UnaryOp::Round>, true);
  add(r, {"aten.expm1.default"}, math<UnaryOp::Expm1>, true);
  add(r, {"aten.log1p.default"}, math<UnaryOp::Log1p>, true);
  add(r, {"aten.abs.default"}, keep_type<UnaryOp::Abs>, true);
  add(r, {"aten.neg.default"}, keep_type<UnaryOp::Neg>, true);
  add(r, {"aten.sign.default"}, keep_type<UnaryOp::Sign>, true);
  add(r, {"aten.isnan.default"}, predicate<UnaryOp::IsNan>, true);
  add(r, {"aten.isinf.default"}, predicate<UnaryOp::IsInf>, true);
}

}  // namespace kiln::conversion
