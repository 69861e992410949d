#pragma once
// How large a fused pointwise program (LayerKind::FusedPointwise, made by the builder's pointwise fusion) may
// be: every backend's fused pointwise kernels take at least this much (the CUDA kernels' fixed-size argument
// blocks hold no more), so the builder stops a chain before it exceeds either limit and fuses the rest apart.

#include <cstddef>

namespace kiln::engine {

/// Inputs and weights (one per use of a small constant) one fused pointwise program reads, together.
inline constexpr size_t kMaxFusedPointwiseSources = 8;
/// Instructions (fused layers) in one fused pointwise program.
inline constexpr size_t kMaxFusedPointwiseInstrs = 32;

}  // namespace kiln::engine
