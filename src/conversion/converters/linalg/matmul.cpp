// Matrix products: linear, addmm, mm, bmm, matmul.

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/pointwise.h"
#include "kiln/conversion/impl/linalg.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using impl::Operand;

Outputs linear(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* bias = a.has("bias") ? a.tensor(ctx, "bias") : nullptr;
  return {impl::linear(ctx, a.tensor(ctx, "input"), a.tensor(ctx, "weight"), bias)};
}

Outputs matmul(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  const char* lhs = a.raw("mat1") ? "mat1" : "self";
  const char* rhs = a.raw("mat2") ? "mat2" : "other";
  return {impl::matmul(ctx, a.tensor(ctx, lhs), a.tensor(ctx, rhs))};
}

Outputs addmm(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const DType t = detail::out_dtype(n);
  engine::Tensor* y = impl::matmul(ctx, a.tensor(ctx, "mat1"), a.tensor(ctx, "mat2"));
  const double alpha = a.float_("alpha", 1.0), beta = a.float_("beta", 1.0);
  if (alpha != 1.0) y = impl::binary(ctx, Operand::of(y), Operand::of(alpha, true), engine::ElementwiseOp::Mul, t);
  if (beta == 0.0) return {y};
  engine::Tensor* c = a.tensor(ctx, "self");
  if (beta != 1.0) c = impl::binary(ctx, Operand::of(c), Operand::of(beta, true), engine::ElementwiseOp::Mul, t);
  return {impl::binary(ctx, Operand::of(y), Operand::of(c), engine::ElementwiseOp::Add, t)};
}

}  // namespace

void register_matmul_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.linear.default"}, linear, true);
  add(r, {"aten.mm.default", "aten.bmm.default", "aten.matmul.default"}, matmul, true);
  add(r, {"aten.addmm.default"}, addmm, true);
}

}  // namespace kiln::conversion
