#pragma once
// Cumulative layers: running sum, product, max or min along an axis.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

struct CumulativeParams {
  enum Op : uint8_t { Sum, Prod, Max, Min } op = Sum;
  int64_t axis = 0;
  bool exclusive = false;
  bool reverse = false;
  KILN_VISIT_FIELDS(v("op", op); v("axis", axis); v("exclusive", exclusive); v("reverse", reverse))
};

}  // namespace kiln::engine
