#include "kiln/conversion/impl/pointwise.h"

#include <limits>

#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/support/dtype_promotion.h"
#include "kiln/support/error.h"

namespace kiln::conversion::impl {

using engine::ElementwiseOp;

Operand operand(ConversionContext& ctx, const ConverterArgs& args, const std::string& name) {
  ArgValue a = args.get(name);
  if (a.is_scalar()) {
    const ir::Argument& s = *a.scalar;
    if (s.kind() == ir::Argument::Kind::Float) return Operand::of(s.as_float(), true);
    if (s.kind() == ir::Argument::Kind::Bool) return Operand::of(s.as_bool() ? 1.0 : 0.0, false);
    if (s.kind() == ir::Argument::Kind::Int) return Operand::of(static_cast<double>(s.as_int()), false);
    if (s.kind() == ir::Argument::Kind::SymInt) {
      const SymIntValue v = args.sym_int(ctx, name);
      if (v.is_static()) return Operand::of(static_cast<double>(*v.value), false);
      return Operand::of_run_time_int(reshape(ctx, v.tensor, {}));
    }
  }
  return Operand::of(args.tensor(ctx, name));
}

DType compute_type(const Operand& a, const Operand& b) {
  const bool tensor_a = a.tensor && !a.run_time_int, tensor_b = b.tensor && !b.run_time_int;
  if (tensor_a && tensor_b) return promote_types(a.tensor->dtype(), a.tensor->rank(), b.tensor->dtype(), b.tensor->rank());
  if (!tensor_a && !tensor_b) return a.scalar_is_float || b.scalar_is_float ? DType::Float32 : DType::Int64;
  const Operand& t = tensor_a ? a : b;
  const Operand& s = tensor_a ? b : a;
  const DType d = t.tensor->dtype();
  if (s.scalar_is_float && !is_floating(d)) return DType::Float32;
  if (d == DType::Bool) return DType::Int64;
  return d;
}

namespace {
engine::Tensor* as_tensor(ConversionContext& ctx, const Operand& o, DType type) {
  if (o.tensor) return cast(ctx, o.tensor, type);
  return scalar(ctx, o.scalar, type);
}
}  // namespace

engine::Tensor* binary(ConversionContext& ctx, const Operand& a, const Operand& b, ElementwiseOp op,
                       std::optional<DType> type) {
  const DType t = type.value_or(compute_type(a, b));
  return ctx.net.add_elementwise(ctx.name(engine::elementwise_op_name(op)), as_tensor(ctx, a, t), as_tensor(ctx, b, t),
                                 op);
}

engine::Tensor* activation(ConversionContext& ctx, engine::Tensor* x, engine::ActivationKind kind, double alpha,
                           double beta) {
  if (!is_floating(x->dtype())) x = cast(ctx, x, DType::Float32);
  return ctx.net.add_activation(ctx.name(engine::activation_kind_name(kind)), x, kind, alpha, beta);
}

engine::Tensor* unary(ConversionContext& ctx, engine::Tensor* x, engine::UnaryOp op, bool to_float) {
  if (to_float && !is_floating(x->dtype())) x = cast(ctx, x, DType::Float32);
  return ctx.net.add_unary(ctx.name(engine::unary_op_name(op)), x, op);
}

engine::Tensor* clamp(ConversionContext& ctx, engine::Tensor* x, std::optional<double> lo, std::optional<double> hi) {
  if (is_floating(x->dtype())) {
    const double inf = std::numeric_limits<double>::infinity();
    return activation(ctx, x, engine::ActivationKind::Clip, lo.value_or(-inf), hi.value_or(inf));
  }
  if (lo) x = binary(ctx, Operand::of(x), Operand::of(*lo, false), ElementwiseOp::Max, x->dtype());
  if (hi) x = binary(ctx, Operand::of(x), Operand::of(*hi, false), ElementwiseOp::Min, x->dtype());
  return x;
}

engine::Tensor* where(ConversionContext& ctx, engine::Tensor* cond, const Operand& a, const Operand& b) {
  const DType t = compute_type(a, b);
  return ctx.net.add_select(ctx.name("where"), cast(ctx, cond, DType::Bool), as_tensor(ctx, a, t), as_tensor(ctx, b, t));
}

}  // namespace kiln::conversion::impl
