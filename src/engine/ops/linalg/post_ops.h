#pragma once
// The epilogue the reference convolution and matrix multiply share: bias, then post-ops in order.

#include <functional>
#include <vector>

#include "engine/ops/common.h"

namespace kiln::engine::ops {

/// Applies bias (per `channel_of(i)`) and post-ops to a float result, then stores it into the layer's output.
void finish_linalg(const Layer& layer, const std::vector<PostOp>& post_ops, KernelArgs& args,
                   std::vector<float>& acc, const std::function<int64_t(int64_t)>& channel_of);

}  // namespace kiln::engine::ops
