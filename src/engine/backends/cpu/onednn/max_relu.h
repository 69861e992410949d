#pragma once
// ReLU as oneDNN's own relu post-op (a max) where a bound proves it exact.
//
// oneDNN 2.6's relu post-op maps NaN to 0 (vmaxps operand order), so Kiln gives oneDNN ReLU as elu(alpha 0)
// then x*1 + 0 (onednn_common.cpp), exact and NaN-propagating as torch.relu (issue 23). That elu evaluates an
// exp per element: on an AVX2 core a 1x1 convolution of 64 input channels with it runs 35% longer than with
// oneDNN's relu. On finite values the two chains give the same bits (+0 for every x <= 0, x otherwise), so a
// convolution whose post-ops are ReLUs and at most one residual sum runs oneDNN's relu whenever no value
// before a ReLU can be NaN or infinite:
//
//   max|x| * max_o sum_i |w[o, i]| + max|bias| + |scale| * max|residual|  <  FLT_MAX / 8
//
// bounds every partial sum of the convolution, in whatever order oneDNN adds (rounding adds at most a
// relative K * 2^-24 per sum, far below the margin of 8), and every value the chain passes a ReLU. The
// weights' and bias' terms are computed once; max|x| and max|residual| by a scan per call, which is +inf
// when either holds a NaN or an infinity, and then the exact chain runs.

#include <optional>

#include "engine/backends/cpu/onednn/onednn_common.h"

namespace kiln::engine::cpu::onednn {

class MaxRelu {
 public:
  /// The guard for a direct (not Winograd), not transposed convolution whose post-ops include a ReLU and are
  /// otherwise only a residual sum; nullopt for any other layer.
  static std::optional<MaxRelu> for_convolution(const Layer& layer, bool winograd);

  /// The post-ops with each ReLU as oneDNN's relu.
  const dnnl::primitive_attr& attr() const { return attr_; }

  /// Whether the bound holds for input `x` and `residual` (null without one) as they are now.
  bool holds(const TensorView& x, const TensorView* residual, ThreadPool* pool) const;

 private:
  double weights_bound_ = 0, bias_bound_ = 0, sum_scale_ = 0;
  dnnl::primitive_attr attr_;
};

}  // namespace kiln::engine::cpu::onednn
