#pragma once
// TopK layers: the k largest (or smallest) elements along an axis and their indices.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Top k along axis (sorted; ties keep the lower index first). Outputs: values, indices (Int64).
/// k may come from the optional shape-tensor input 1.
struct TopKParams {
  int64_t k = 1;
  int64_t axis = -1;
  bool largest = true;
  KILN_VISIT_FIELDS(v("k", k); v("axis", axis); v("largest", largest))
};

}  // namespace kiln::engine
