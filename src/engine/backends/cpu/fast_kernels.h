#pragma once
// Registration functions of the CPU backend's own vectorized kernels (one per file in the family folders
// pointwise/, movement/, reduction/, spatial/, attention/).

#include "engine/backends/cpu/kernel_registry.h"

namespace kiln::engine::cpu::fast {

/// A row's `create` for a kernel built from its layer: `KernelRow{"vec", kind, applies, make_kernel<K>}`.
template <class K>
std::unique_ptr<Kernel> make_kernel(const LayerInfo& info) {
  return std::make_unique<K>(*info.layer);
}

/// Whether `dtype` is f32, the vec kernels' one dtype; when not, refuses saying so (see refuse()).
inline bool vec_dtype_ok(DType dtype, std::string* why) {
  return dtype == DType::Float32 || refuse(why, std::string(dtype_name(dtype)) + " (vec takes f32)");
}

/// Row "vec" for Normalization (layer / group / instance norm, fp32).
void register_normalization(KernelTable& registry);
/// Row "vec" for Pooling (max / average, adaptive, fp32, in the input's memory format).
void register_pooling(KernelTable& registry);
/// Row "vec" for Softmax (softmax / log-softmax, fp32).
void register_softmax(KernelTable& registry);
/// Row "vec" for Reduce (sum / mean / max / min over trailing dims, fp32).
void register_reduce(KernelTable& registry);
/// Row "vec" for Attention (fp32, q/k/v with equal batch dims).
void register_attention(KernelTable& registry);
/// Rows "vec" for FusedPointwise, Activation and Elementwise (fp32).
void register_pointwise(KernelTable& registry);
/// Row "vec" for Shuffle (any dtype of 1, 2, 4 or 8 bytes; one permutation at most).
void register_movement(KernelTable& registry);
/// Row "vec" for Slice (constant start and stride; any dtype of 1, 2, 4 or 8 bytes).
void register_slice(KernelTable& registry);
/// Row "vec" for Gather (default mode; any dtype; int32 or int64 indices).
void register_gather(KernelTable& registry);

}  // namespace kiln::engine::cpu::fast
