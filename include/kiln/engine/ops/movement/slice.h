#pragma once
// Slice layers: strided slices of every dim.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// out[i] = in[start + i*stride] per dim. Optional shape-tensor inputs 1, 2, 3 override start, size,
/// stride. Start must be in range; stride may be negative, or 0 (element `start` repeated: a broadcast, as
/// aten.expand of a size-1 dim); no clamping (converters normalize).
struct SliceParams {
  std::vector<int64_t> start, size, stride;
  KILN_VISIT_FIELDS(v("start", start); v("size", size); v("stride", stride))
};

}  // namespace kiln::engine
