#pragma once
// Shape layers: the dims of the input as a 1-D Int64 tensor.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

struct ShapeParams {
  KILN_VISIT_FIELDS((void)v)
};

}  // namespace kiln::engine
