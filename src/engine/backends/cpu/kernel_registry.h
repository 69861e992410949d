#pragma once
// The CPU backend's kernel table: the seam between the engine core and CPU kernel authors.
//
// A CPU kernel is a CpuKernelFactory row: a tactic name, the layer kind it implements, a predicate saying
// whether it can run a given layer (dtypes, ranks, params), and a constructor. For each layer the CPU
// backend offers, as tactics, every row of that kind whose predicate accepts the layer; the builder times
// them at the profile's opt shape and keeps the fastest (the reference row "ref" is always a candidate).
//
// Rules for kernels (see include/kiln/engine/backend.h for Kernel/KernelArgs):
//   - Tensors are dense, C-ordered, of the dtypes in LayerInfo (fp32, fp16, bf16, ints, bool), unless the
//     row has a `formats` function: then the builder may give the kernel tensors in the formats it returns
//     (TensorInfo::format / TensorView::format) and the kernel must handle any format it is created with
//     or throw kiln::Error. Reformat rows read params.from and write params.to.
//   - Weights are in layer->weights (slots per kind, documented in layers.h); prepare them in create()
//     (reorder to blocked layouts, cast), never in execute().
//   - execute() is const and may run concurrently from several contexts; put per-context caches in the
//     KernelState from create_state(); parallelize with args.pool->parallel_for.
//   - Fused layers: Convolution/MatrixMultiply carry post_ops (activation, or Sum of the next extra input)
//     and an optional bias weight; FusedPointwise carries a small program (layers.h). With one Sum, the
//     output may be the residual's own buffer (the memory plan does that when the residual dies there):
//     read each residual element before writing that output element, and skip copying when they coincide.
//   - The semantics of every kind are those of the reference kernels in src/engine/reference/.
//
// Rows come from two functions: register_reference_kernels (this backend's own, reference_kernels.cpp)
// and register_fast_kernels (src/engine/backends/cpu/kernels/register.cpp, owned by the fast-kernel
// author: oneDNN convolution/matmul with post-ops, vectorized pointwise/softmax/normalization, ...).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/backend.h"

namespace kiln::engine::cpu {

struct CpuKernelFactory {
  /// Tactic name, unique per kind and stable (plans store it): "ref", "onednn", "avx512", ...
  std::string name;
  LayerKind kind;
  /// Whether this kernel can run `layer`.
  std::function<bool(const LayerInfo& layer)> applies;
  /// Creates the kernel (prepares weights). Called at build (for timing) and at plan load / refit.
  std::function<std::unique_ptr<Kernel>(const LayerInfo& layer)> create;
  /// The memory formats the kernel prefers for `layer` (see Backend::formats); null: Plain only.
  std::function<TacticFormats(const LayerInfo& layer)> formats = nullptr;
  /// Less precise than the dtype promises (see Tactic::reduced_precision).
  bool reduced_precision = false;
};

class CpuKernelRegistry {
 public:
  /// Adds a row; throws kiln::Error(Internal) on a duplicate (kind, name).
  void add(CpuKernelFactory factory);
  /// Rows of layer.kind() that apply, in registration order.
  std::vector<const CpuKernelFactory*> candidates(const LayerInfo& layer) const;
  /// The row (kind, name), or nullptr.
  const CpuKernelFactory* find(LayerKind kind, const std::string& name) const;
  /// Every row, in registration order (the conformance sweep checks that each is exercised).
  const std::vector<CpuKernelFactory>& rows() const { return rows_; }

 private:
  std::vector<CpuKernelFactory> rows_;
};

/// The reference kernels: one "ref" row for every layer kind (plain loops, every dtype).
void register_reference_kernels(CpuKernelRegistry& registry);
/// The fast kernels (defined in kernels/register.cpp).
void register_fast_kernels(CpuKernelRegistry& registry);
/// The process-wide CPU kernel table (built once, on first use).
const CpuKernelRegistry& cpu_kernels();

}  // namespace kiln::engine::cpu
