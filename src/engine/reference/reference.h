#pragma once
// Reference implementations of every layer kind: plain loops, every dtype, exact semantics. Used by the
// CPU backend's "ref" tactic, by constant folding, and to evaluate shape tensors on the host.

#include <vector>

#include "engine/reference/shape_inference.h"
#include "kiln/engine/backend.h"

namespace kiln::engine::ref {

/// Executes `layer` (any kind) on host buffers.
void execute(const Layer& layer, KernelArgs& args);

/// Evaluates `layer` on host tensors (shape tensors, constant folding): infers output dims, allocates,
/// executes single-threaded and trims data-dependent outputs.
std::vector<HostTensor> evaluate(const Layer& layer, const std::vector<HostTensor>& inputs);

// Per-family entry points (reference_*.cpp).
void execute_pointwise(const Layer& layer, KernelArgs& args);   // elementwise, activation, unary, cast, select, fused
void execute_linalg(const Layer& layer, KernelArgs& args);      // convolution, matrix multiply, attention
void execute_reduction(const Layer& layer, KernelArgs& args);   // reduce, softmax, normalization, cumulative, topk
void execute_movement(const Layer& layer, KernelArgs& args);    // the rest

}  // namespace kiln::engine::ref
