#pragma once
// Host side shared by both Attention tactics ("flash" and "generic").

#include "engine/backends/cuda/attention/attention_launch.h"
#include "kiln/engine/backend.h"

namespace kiln::engine::cuda {

/// The launch parameters of an Attention layer (both tactics) from its params and the tensors of `args`;
/// `*mask` is the mask's data or null (attention_kernels.cpp).
AttnParams attention_params(const AttentionParams& layer, const KernelArgs& args, const void** mask);

}  // namespace kiln::engine::cuda
