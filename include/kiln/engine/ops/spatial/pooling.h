#pragma once
// Pooling layers: max / average pooling over the spatial dims (adaptive too).

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Max/average pooling over the trailing spatial dims (1-3) of an [N, C, ...] input; when `adaptive`,
/// window/stride/padding are derived from `output_size` the way torch's adaptive pooling does.
struct PoolingParams {
  enum Kind : uint8_t { Max, Average } kind = Max;
  std::vector<int64_t> window, stride, pre_padding, post_padding, dilation;
  bool ceil_mode = false;
  bool count_include_pad = true;
  bool adaptive = false;
  std::vector<int64_t> output_size;
  KILN_VISIT_FIELDS(v("kind", kind); v("window", window); v("stride", stride); v("pre_padding", pre_padding);
                    v("post_padding", post_padding); v("dilation", dilation); v("ceil_mode", ceil_mode);
                    v("count_include_pad", count_include_pad); v("adaptive", adaptive);
                    v("output_size", output_size))
};

}  // namespace kiln::engine
