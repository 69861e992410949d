#pragma once
// Scalar semantics of every pointwise operation (the definition the fast kernels must match).

#include <cstdint>
#include <vector>

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
/// a op b on integers (Int64 and narrower, held in int64), exactly, as torch computes them: add, sub, mul and
/// neg wrap around (two's complement); Div and TruncDiv truncate, FloorDiv floors, Mod has the divisor's
/// sign, the lowest value divided by -1 gives itself (mod: 0); pow multiplies (wrapping). Comparisons give
/// 0/1. Throws kiln::Error on division or modulo by zero and on a negative exponent.
int64_t apply_elementwise_int(ElementwiseOp op, int64_t a, int64_t b);
/// The values of an integer dtype; a cast between integer dtypes saturates to them, as round_to does.
struct IntRange {
  int64_t lo = 0, hi = 0;
};
IntRange int_range(DType dtype);
/// Abs, Neg or Sign of an integer, wrapping (abs and neg of the lowest value give it back).
int64_t apply_unary_int(UnaryOp op, int64_t x);
/// `v` as storing it into `dtype` and loading it back gives (a fused program's Cast: Bool gives 0 or 1,
/// integers truncate and saturate).
double round_to(DType dtype, double v);

/// The dtype of each instruction's result of a pointwise `program` (see PointwiseInstr) whose inputs and
/// weights have the dtypes given; operands were validated before.
std::vector<DType> instruction_dtypes(const std::vector<PointwiseInstr>& program,
                                      const std::vector<DType>& inputs, const std::vector<DType>& weights);

}  // namespace kiln::engine::ops
