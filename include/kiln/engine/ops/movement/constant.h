#pragma once
// Constant layers: a tensor held as the layer's weight.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

struct ConstantParams {
  KILN_VISIT_FIELDS((void)v)
};

}  // namespace kiln::engine
