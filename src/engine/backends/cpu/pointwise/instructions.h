#pragma once
// The instructions of the vec pointwise kernels (pointwise.cpp): each runs as one vectorizable loop over a
// block of n elements, on floats. A Bool value is held as 0.0f or 1.0f; instructions that yield Bool write
// those. Arithmetic (activation, unary math, add .. min, pow) lives in arithmetic.cpp; comparisons, logical
// ops, not / isnan / isinf, select and casts in logic.cpp.

#include <string>

#include "kiln/engine/layers.h"

namespace kiln::engine::cpu::fast {

/// Whether `in` is one of logic.cpp's instructions (a comparison, a logical op, not, isnan, isinf, a select
/// or a cast); the others are arithmetic.
bool is_logic(const PointwiseInstr& in);

/// Whether the vec kernels run the arithmetic instruction `in` (its op and operand count); when not, refuses
/// saying why.
bool arithmetic_ok(const PointwiseInstr& in, std::string* why);
/// The same for a logic instruction: casts only between Float32 and Bool.
bool logic_ok(const PointwiseInstr& in, std::string* why);

/// y = in(x[0], x[1]) over n elements; `scalar1`, when not null, is the value of a one-element second operand
/// (pow by 2, 3, 0.5, -1 or 1 runs as multiplies).
void run_arithmetic(const PointwiseInstr& in, const float* const* x, const float* scalar1, float* y,
                    int64_t n);
/// y = in(x[0], x[1], x[2]) over n elements, exactly as the reference: a NaN compares false (ne: true), a
/// select copies the value it picks, a nonzero (NaN too) is true.
void run_logic(const PointwiseInstr& in, const float* const* x, float* y, int64_t n);

}  // namespace kiln::engine::cpu::fast
