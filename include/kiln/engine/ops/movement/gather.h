#pragma once
// Gather layers: elements picked by an index tensor along an axis.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Default: out = data[..., indices, ...] along axis (out rank = data rank - 1 + indices rank).
/// Elements: torch.gather (indices rank == data rank). Negative indices wrap; out of range is an error.
struct GatherParams {
  enum Mode : uint8_t { Default, Elements } mode = Default;
  int64_t axis = 0;
  KILN_VISIT_FIELDS(v("mode", mode); v("axis", axis))
};

}  // namespace kiln::engine
