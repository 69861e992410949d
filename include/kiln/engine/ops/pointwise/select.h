#pragma once
// Select layers: where(condition, then, else) with broadcasting.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

struct SelectParams {
  KILN_VISIT_FIELDS((void)v)
};

}  // namespace kiln::engine
