#pragma once
// Concat layers: inputs joined along an axis.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

struct ConcatParams {
  int64_t axis = 0;
  KILN_VISIT_FIELDS(v("axis", axis))
};

}  // namespace kiln::engine
