// Matrix products and attention: linear, addmm, mm, bmm, matmul, scaled_dot_product_attention.

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/elementwise.h"
#include "kiln/conversion/impl/nn.h"
#include "kiln/support/error.h"

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

Outputs sdpa(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* mask = a.has("attn_mask") ? a.tensor(ctx, "attn_mask") : nullptr;
  const double scale = a.has("scale") ? a.float_("scale") : 0.0;
  KILN_CHECK(!a.has("scale") || scale > 0, Unsupported, ctx.current_node, ": attention scale ", scale);
  return {impl::attention(ctx, a.tensor(ctx, "query"), a.tensor(ctx, "key"), a.tensor(ctx, "value"), mask,
                          a.bool_("is_causal", false), scale)};
}

bool sdpa_supported(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* p = n.find_arg("dropout_p");
  if (p && !p->is_none() && p->as_float() != 0.0) return false;
  const ir::Argument* gqa = n.find_arg("enable_gqa");
  if (gqa && !gqa->is_none() && gqa->as_bool()) return false;
  const ir::Argument* scale = n.find_arg("scale");
  if (scale && !scale->is_none() && scale->kind() == ir::Argument::Kind::Float && scale->as_float() <= 0) return false;
  return true;
}

}  // namespace

void register_linalg_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.linear.default"}, linear, true);
  add(r, {"aten.mm.default", "aten.bmm.default", "aten.matmul.default"}, matmul, true);
  add(r, {"aten.addmm.default"}, addmm, true);
  add(r, {"aten.scaled_dot_product_attention.default"}, sdpa, true, sdpa_supported);
}

}  // namespace kiln::conversion
