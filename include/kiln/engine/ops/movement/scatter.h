#pragma once
// Scatter layers: torch.scatter / scatter_add along an axis.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// torch.scatter / scatter_add along axis: inputs [data, indices (Int64/Int32), updates].
struct ScatterParams {
  enum Reduction : uint8_t { None, Add } reduction = None;
  int64_t axis = 0;
  KILN_VISIT_FIELDS(v("reduction", reduction); v("axis", axis))
};

}  // namespace kiln::engine
