#pragma once
// The instructions of the vec pointwise kernels (pointwise.cpp): each runs as one vectorizable loop over a
// block of n elements, in lanes of its values' dtype: Float32 in floats, a Bool as 0.0f or 1.0f (instructions
// that yield Bool write those), Int64 and Int32 in int64. Float arithmetic (activation, unary math, add ..
// min, pow) lives in arithmetic.cpp; comparisons, logical ops, not / isnan / isinf, select and casts of
// floats and Bools in logic.cpp; every instruction that reads or yields an integer in integer.cpp.

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

/// Whether `in` is one of integer.cpp's: its first value operand (`source`: a select's then, else operand 0)
/// or its `result` is an integer.
bool is_integer(const PointwiseInstr& in, DType source, DType result);
/// Whether the vec kernels run the integer instruction `in`; when not, refuses saying why.
bool integer_ok(const PointwiseInstr& in, DType source, DType result, std::string* why);
/// y = in(x[0], x[1], x[2]) over n elements in the lanes of each operand's and the result's dtype, exactly as
/// the reference (engine/ops/scalar_ops.h); throws kiln::Error on an integer division or modulo by zero.
void run_integer(const PointwiseInstr& in, DType source, DType result, const void* const* x, void* y,
                 int64_t n);

}  // namespace kiln::engine::cpu::fast
