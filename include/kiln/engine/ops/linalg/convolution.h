#pragma once
// Convolution layers (and transposed convolution).

#include "kiln/engine/ops/linalg/post_op.h"
#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Convolution (or transposed convolution when `transposed`) over 1, 2 or 3 spatial dims.
/// Layer inputs: [x, residuals for Sum post-ops...]. Weights: [kernel, bias (may be undefined)].
/// Kernel layout: [O, I/groups, k...] (transposed: [I, O/groups, k...]). All vectors have one entry per
/// spatial dim.
struct ConvolutionParams {
  std::vector<int64_t> stride, pre_padding, post_padding, dilation, output_padding;
  int64_t groups = 1;
  bool transposed = false;
  std::vector<PostOp> post_ops;
  KILN_VISIT_FIELDS(v("stride", stride); v("pre_padding", pre_padding); v("post_padding", post_padding);
                    v("dilation", dilation); v("output_padding", output_padding); v("groups", groups);
                    v("transposed", transposed); v("post_ops", post_ops))
};

}  // namespace kiln::engine
