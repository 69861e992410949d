#pragma once
// Cast layers: the input converted to another dtype.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

struct CastParams {
  DType to = DType::Float32;
  KILN_VISIT_FIELDS(v("to", to))
};

}  // namespace kiln::engine
