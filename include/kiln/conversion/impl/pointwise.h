#pragma once
// Pointwise building blocks: binary elementwise with broadcasting and type promotion, activations, unary math.

#include <optional>

#include "kiln/conversion/conversion_context.h"
#include "kiln/conversion/converter_args.h"

namespace kiln::conversion::impl {

/// An operand of a binary op: a tensor, or a scalar that takes the other operand's type (torch's rule for
/// Python scalars).
/// A SymInt Scalar only known at run time is a 0-d Int64 `tensor` with `run_time_int` set: it promotes like a
/// Python int, not like a tensor.
struct Operand {
  engine::Tensor* tensor = nullptr;
  double scalar = 0.0;
  bool scalar_is_float = false;
  bool run_time_int = false;
  static Operand of(engine::Tensor* t) { return Operand{t, 0.0, false, false}; }
  static Operand of(double v, bool is_float) { return Operand{nullptr, v, is_float, false}; }
  /// A run-time integer scalar (a 0-d Int64 tensor).
  static Operand of_run_time_int(engine::Tensor* t) { return Operand{t, 0.0, false, true}; }
};
/// An argument as an Operand (Tensor and Weight become tensors; a numeric Scalar stays a scalar; a SymInt Scalar
/// is a scalar when its value is known at build time, else a run-time integer computed from the shapes).
Operand operand(ConversionContext& ctx, const ConverterArgs& args, const std::string& name);

/// The dtype torch computes `a op b` in (before a comparison makes it Bool).
DType compute_type(const Operand& a, const Operand& b);
/// a op b, both operands converted to `type` (default: compute_type) and broadcast.
engine::Tensor* binary(ConversionContext& ctx, const Operand& a, const Operand& b, engine::ElementwiseOp op,
                       std::optional<DType> type = std::nullopt);
/// An activation layer (input cast to f32 first when not floating).
engine::Tensor* activation(ConversionContext& ctx, engine::Tensor* x, engine::ActivationKind kind, double alpha = 0,
                           double beta = 0);
/// A unary math layer (input cast to f32 first when `to_float` and not floating).
engine::Tensor* unary(ConversionContext& ctx, engine::Tensor* x, engine::UnaryOp op, bool to_float = true);
/// Clamp to [lo, hi] (either may be absent); floating inputs use a Clip activation.
engine::Tensor* clamp(ConversionContext& ctx, engine::Tensor* x, std::optional<double> lo, std::optional<double> hi);
/// where(cond, a, b) with broadcasting and promotion of a/b.
engine::Tensor* where(ConversionContext& ctx, engine::Tensor* cond, const Operand& a, const Operand& b);

}  // namespace kiln::conversion::impl
