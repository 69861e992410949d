#pragma once
// torch's type promotion of two tensors, shared by the converters (what an op computes in) and the loader's
// dtype check (what an op's output must be declared as).

#include <cstdint>

#include "kiln/support/dtype.h"

namespace kiln {

/// torch's result type of two tensors (bool < integral < floating; within a category the wider type;
/// f16 with bf16 gives f32, u8 with i8 gives i16). A 0-d operand (rank 0) whose category is not higher than a
/// dimensioned operand's does not widen it.
DType promote_types(DType a, int64_t rank_a, DType b, int64_t rank_b);

}  // namespace kiln
