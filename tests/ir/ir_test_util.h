#pragma once
// Helpers of the ir tests.

#include <cstdint>
#include <vector>

#include "kiln/ir/tensor_meta.h"

namespace kiln::ir::testing {

/// The metadata of a float32 tensor of static `sizes`.
inline TensorMeta f32(std::vector<int64_t> sizes) { return TensorMeta::make(DType::Float32, sizes); }

}  // namespace kiln::ir::testing
