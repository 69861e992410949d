#pragma once
// NonZero layers: the indices of the non-zero elements (a data-dependent output shape).

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Indices of non-zero elements: Int64 [count, rank] (torch.nonzero layout); count is known only after
/// execution, so this output needs an OutputAllocator when it is a network output.
struct NonZeroParams {
  KILN_VISIT_FIELDS((void)v)
};

}  // namespace kiln::engine
