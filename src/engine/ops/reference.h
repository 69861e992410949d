#pragma once
// Reference implementations of every layer kind: plain loops, every dtype, exact semantics. Used by the
// CPU backend's "ref" tactic, by constant folding, and to evaluate shape tensors on the host.

#include <vector>

#include "engine/ops/shape_inference.h"
#include "kiln/engine/backend.h"

namespace kiln::engine::ops {

/// Executes `layer` (any kind) on host buffers: its kind's reference kernel (engine/ops/<family>/<kind>.cpp).
void execute(const Layer& layer, KernelArgs& args);

/// Evaluates `layer` on host tensors (shape tensors, constant folding): infers output dims, allocates,
/// executes single-threaded and trims data-dependent outputs.
std::vector<HostTensor> evaluate(const Layer& layer, const std::vector<HostTensor>& inputs);

}  // namespace kiln::engine::ops
