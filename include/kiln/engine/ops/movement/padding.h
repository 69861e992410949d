#pragma once
// Padding layers: constant, reflect, replicate or circular padding of every dim.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Pads each dim by pre[i] / post[i] elements (one entry per dim, >= 0).
struct PaddingParams {
  enum Mode : uint8_t { Constant, Reflect, Replicate, Circular } mode = Constant;
  std::vector<int64_t> pre, post;
  double value = 0.0;
  KILN_VISIT_FIELDS(v("mode", mode); v("pre", pre); v("post", post); v("value", value))
};

}  // namespace kiln::engine
