#pragma once
// Resize layers: nearest / linear resize of the spatial dims.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Resize of the trailing spatial dims of [N, C, ...]: to `output_size`, or by `scales` (torch semantics:
/// when scales are given they set the source-coordinate ratio), or to the shape-tensor input 1 (full
/// output dims). Nearest follows torch 'nearest' (floor); Linear is (bi/tri)linear.
struct ResizeParams {
  enum Mode : uint8_t { Nearest, Linear } mode = Nearest;
  std::vector<int64_t> output_size;
  std::vector<double> scales;
  bool align_corners = false;
  KILN_VISIT_FIELDS(v("mode", mode); v("output_size", output_size); v("scales", scales);
                    v("align_corners", align_corners))
};

}  // namespace kiln::engine
