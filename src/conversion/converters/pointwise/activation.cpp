// Activations: relu, sigmoid, tanh, gelu, silu, hardswish, hardsigmoid, hardtanh/relu6, leaky_relu, elu,
// softplus, mish, prelu.

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/pointwise.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using engine::ActivationKind;

template <ActivationKind K>
Outputs simple(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::activation(ctx, a.tensor(ctx, "self"), K)};
}

Outputs gelu(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  const std::string approx = a.string("approximate", "none");
  KILN_CHECK(approx == "none" || approx == "tanh", InvalidInput, ctx.current_node, ": gelu approximate='", approx, "'");
  return {impl::activation(ctx, a.tensor(ctx, "self"), approx == "tanh" ? ActivationKind::GeluTanh : ActivationKind::GeluErf)};
}

Outputs hardtanh(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::activation(ctx, a.tensor(ctx, "self"), ActivationKind::Clip, a.float_("min_val", -1.0),
                           a.float_("max_val", 1.0))};
}

Outputs relu6(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::activation(ctx, a.tensor(ctx, "self"), ActivationKind::Clip, 0.0, 6.0)};
}

Outputs hardsigmoid(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::activation(ctx, a.tensor(ctx, "self"), ActivationKind::HardSigmoid, 1.0 / 6.0, 0.5)};
}

Outputs leaky_relu(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::activation(ctx, a.tensor(ctx, "self"), ActivationKind::LeakyRelu, a.float_("negative_slope", 0.01))};
}

Outputs elu(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::activation(ctx, a.tensor(ctx, "self"), ActivationKind::Elu, a.float_("alpha", 1.0))};
}

// elu with scale / input_scale other than 1 (selu-like variants) stays in torch.
bool plain_elu(const ir::Node& n, const settings::CompilationSettings&) {
  for (const char* k : {"scale", "input_scale"}) {
    const ir::Argument* a = n.find_arg(k);
    if (a && !a->is_none() && a->as_float() != 1.0) return false;
  }
  return true;
}

Outputs softplus(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::activation(ctx, a.tensor(ctx, "self"), ActivationKind::Softplus, a.float_("threshold", 20.0),
                           a.float_("beta", 1.0))};
}

Outputs prelu(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  // prelu(x) = max(x, 0) + w * min(x, 0), w broadcast along dim 1.
  engine::Tensor* x = a.tensor(ctx, "self");
  engine::Tensor* w = a.tensor(ctx, "weight");
  if (x->rank() >= 2 && w->rank() == 1 && w->dims()[0] != 1) {
    engine::ShuffleParams p;
    p.has_reshape = true;
    p.reshape.assign(static_cast<size_t>(x->rank() - 1), 1);
    p.reshape[0] = w->dims()[0];
    w = ctx.net.add_shuffle(ctx.name("weight"), w, p);
  }
  engine::Tensor* pos = impl::binary(ctx, impl::Operand::of(x), impl::Operand::of(0.0, false), engine::ElementwiseOp::Max);
  engine::Tensor* neg = impl::binary(ctx, impl::Operand::of(x), impl::Operand::of(0.0, false), engine::ElementwiseOp::Min);
  neg = impl::binary(ctx, impl::Operand::of(neg), impl::Operand::of(w), engine::ElementwiseOp::Mul);
  return {impl::binary(ctx, impl::Operand::of(pos), impl::Operand::of(neg), engine::ElementwiseOp::Add)};
}

}  // namespace

void register_activation_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.relu.default"}, simple<ActivationKind::Relu>, true);
  add(r, {"aten.sigmoid.default"}, simple<ActivationKind::Sigmoid>, true);
  add(r, {"aten.tanh.default"}, simple<ActivationKind::Tanh>, true);
  add(r, {"aten.silu.default"}, simple<ActivationKind::Silu>, true);
  add(r, {"aten.hardswish.default"}, simple<ActivationKind::HardSwish>, true);
  add(r, {"aten.mish.default"}, simple<ActivationKind::Mish>, true);
  add(r, {"aten.gelu.default"}, gelu, true);
  add(r, {"aten.hardtanh.default"}, hardtanh, true);
  add(r, {"aten.relu6.default"}, relu6, true);
  add(r, {"aten.hardsigmoid.default"}, hardsigmoid, true);
  add(r, {"aten.leaky_relu.default"}, leaky_relu, true);
  add(r, {"aten.elu.default"}, elu, true, plain_elu);
  add(r, {"aten.softplus.default"}, softplus, true);
  add(r, {"aten.prelu.default", "aten._prelu_kernel.default"}, prelu, true);
}

}  // namespace kiln::conversion
