#pragma once
// Softmax layers (and log-softmax).

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Softmax (or log-softmax) along `axis`.
struct SoftmaxParams {
  int64_t axis = -1;
  bool log = false;
  KILN_VISIT_FIELDS(v("axis", axis); v("log", log))
};

}  // namespace kiln::engine
