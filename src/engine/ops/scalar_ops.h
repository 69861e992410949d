#pragma once
// Scalar semantics of every pointwise operation (the definition the fast kernels must match).

#include "kiln/engine/layers.h"
#include "kiln/support/dtype.h"

namespace kiln::engine::ops {

/// The activation of `x`.
double apply_activation(const ActivationParams& p, double x);
/// The unary op of `x`.
double apply_unary(UnaryOp op, double x);
/// a op b; integer dtypes use integer semantics (Div truncates, FloorDiv floors, Mod has the divisor's sign);
/// comparisons and logical ops give 0/1. Throws kiln::Error on integer division by zero.
double apply_elementwise(ElementwiseOp op, double a, double b, DType dtype);
/// `v` as storing it into `dtype` and loading it back gives (a fused program's Cast: Bool gives 0 or 1, integers
/// truncate and saturate).
double round_to(DType dtype, double v);

}  // namespace kiln::engine::ops
