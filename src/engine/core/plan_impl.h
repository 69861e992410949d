#pragma once
// Plan::Impl: the built network as the builder leaves it, the plan file holds it, and contexts run it.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/shape_walk.h"
#include "kiln/engine/backend.h"
#include "kiln/engine/plan.h"
#include "kiln/engine/precision_policy.h"
#include "kiln/engine/tactic_stats.h"
#include "kiln/support/error.h"

namespace kiln::engine {

struct PlanTensor {
  std::string name;
  DType dtype = DType::Float32;
  Dims dims;  // -1 for dynamic
  bool is_input = false;
  bool is_output = false;
  int64_t producer = -1;  // layer index, -1 for inputs
  TensorFormat format = TensorFormat::Plain;  // memory format (Plain for bindings, host and constant tensors)
  std::optional<DynamicRange> range = std::nullopt;  // its network tensor's dynamic range, if any
};

/// Whether the builder stores tensor `t` in INT8 between INT8 layers (an s8/u8 tensor with a dynamic range).
inline bool held_in_int8(const PlanTensor& t) {
  return t.range && (t.dtype == DType::Int8 || t.dtype == DType::UInt8);
}

struct PlanLayer {
  Layer layer;
  std::string tactic;  // empty for host and constant layers
  bool host = false;   // evaluated on the host during shape inference (shape-tensor arithmetic)
  std::vector<uint8_t> kernel_data;  // Kernel::plan_data() of the layer's kernel (LayerInfo::plan_data on reload)
  // Builder only (not serialized): the kernel is made again after the builder changed what it writes, in a timed
  // build; it times itself again (LayerInfo::tune) instead of reading kernel_data, which was for the old kernel.
  bool retime = false;
};

/// Per profile: the input ranges, every tensor's dims range, and the memory plan.
struct PlanProfile {
  OptimizationProfile profile;
  std::vector<Dims> min, opt, max;  // per tensor
  std::vector<int64_t> offsets;     // per tensor: arena offset, -1 when not in the arena
  std::vector<int64_t> capacity;    // per tensor: bytes reserved (max shape, in the tensor's format)
  uint64_t arena_bytes = 0;
  uint64_t live_lower_bound = 0;
};

/// Where a named weight lives in the plan and what it was before the builder transformed it.
struct RefitEntry {
  std::string name;
  int64_t layer = 0;
  int64_t slot = 0;
  DType original_dtype = DType::Float32;
  Dims original_dims;
};

/// One allocation of a backend, freed with it (device copies of constants).
struct BackendBuffer {
  const Backend* backend = nullptr;
  void* data = nullptr;
  BackendBuffer() = default;
  BackendBuffer(const BackendBuffer&) = delete;
  BackendBuffer& operator=(const BackendBuffer&) = delete;
  BackendBuffer(BackendBuffer&& o) noexcept : backend(o.backend), data(o.data) { o.data = nullptr; }
  BackendBuffer& operator=(BackendBuffer&& o) noexcept {
    std::swap(backend, o.backend);
    std::swap(data, o.data);
    return *this;
  }
  ~BackendBuffer() {
    if (data) backend->deallocate(data);
  }
};

struct Plan::Impl {
  std::string backend_name;
  std::string device;
  bool refittable = false;
  bool strip_weights = false;
  std::vector<PlanTensor> tensors;
  std::vector<PlanLayer> layers;
  std::vector<int64_t> inputs, outputs;  // tensor ids, binding order: inputs then outputs
  std::vector<PlanProfile> profiles;
  std::vector<RefitEntry> refit;
  uint64_t workspace_bytes = 0;

  // Derived at build / load (not serialized).
  std::vector<Binding> bindings;
  std::vector<std::unique_ptr<Kernel>> kernels;  // per layer; null for host / constant layers
  // Per layer: the device copy of a Constant layer's value when the backend's memory is not host memory
  // (empty on cpu). Declared after `backend`, so destroyed before it.
  std::unique_ptr<Backend> backend;
  std::vector<BackendBuffer> device_constants;
  std::vector<std::vector<int64_t>> consumers;  // per tensor
  // Per tensor: its dims are known only once a NonZero before it has run (see data_dependent_tensors).
  std::vector<bool> data_dependent;
  uint64_t refit_generation = 0;  // incremented by every refit (contexts drop cached shape-tensor values)
  TacticStats tactic_stats;       // set by the build's tactic selection
  std::vector<PrecisionNote> precision_notes;  // set by the build's reduced-precision lowering

  /// Fills bindings, consumers and data_dependent from tensors/layers.
  void derive();
  /// LayerInfo of layer i over profile 0.
  LayerInfo layer_info(int64_t i) const;
  /// Whether a layer runs as a backend kernel.
  bool is_kernel_layer(int64_t i) const {
    return !layers[i].host && layers[i].layer.kind != LayerKind::Constant;
  }
  /// (Re)creates kernels (all, or only layer `only`). Layers with missing weights get none. Also uploads
  /// constants (upload_constants). A kernel the backend fails to build is an error of kind `build_failure`:
  /// Internal where Kiln chose the tactic (build, refit), InvalidInput where the plan's bytes named it (load: a
  /// plan file whose layer no kernel of its tactic can run on this machine, or a forged one).
  void create_kernels(int64_t only = -1, ErrorKind build_failure = ErrorKind::Internal);
  /// On a backend without host-accessible memory, copies Constant layers' values (all, or layer `only`)
  /// into device_constants (synchronously: at build, load and refit, never during execute).
  void upload_constants(int64_t only = -1);
  bool weights_missing() const;
};

/// The dtype tensor `id` has for layer semantics (shape inference, validation): its dtype, or for a tensor held
/// in INT8 (held_in_int8) the floating dtype it stands for, which the plan does not record: that of the first
/// tensor not held in INT8 up its chain of producers' inputs 0 (an INT8 convolution writes its input's dtype;
/// fp32 where the chain ends otherwise).
DType logical_dtype(const Plan::Impl& g, int64_t id);

/// Concrete shape inference over a plan for given input dims (shape_walk.h's step, HostValues::HostLayers):
/// host layers are evaluated and small integer constants kept (values filled); data-dependent dims are 0
/// (Min), the input numel (Max) or -1 (Unknown).
struct ConcreteShapes {
  std::vector<Dims> dims;
  std::vector<std::optional<HostTensor>> values;
};
ConcreteShapes infer_concrete(const Plan::Impl& plan, const std::vector<Dims>& input_dims, DataDependentGuess guess);
/// The inputs of plan layer `layer` as shape inference sees them, from a walk's per-tensor dims and values.
std::vector<ShapeIn> plan_shape_inputs(const Plan::Impl& plan, const Layer& layer,
                                       const std::vector<Dims>& dims,
                                       const std::vector<std::optional<HostTensor>>& values);

/// Per tensor: true when its dims depend on data, i.e. it is a NonZero output, or it has a dynamic dim and is made
/// from such a tensor (a gather at nonzero's indices). A data-dependent network output needs an OutputAllocator;
/// inside the plan, such a tensor lives in the arena at its largest size (every element selected).
std::vector<bool> data_dependent_tensors(const Plan::Impl& plan);

/// A Shuffle that moves no element: no permutation (or identity ones), only a new shape. In the plan's memory its
/// output is a view of its input (plan_memory) where both are Plain or both E4M3, of one dtype.
bool is_reshape_view(const Layer& l);

/// Activation memory planning for one profile (fills offsets, capacity, arena_bytes, live_lower_bound).
void plan_memory(const Plan::Impl& plan, PlanProfile& profile);

/// Params as one line of text ("axis=1;log=0;").
std::string params_text(const LayerParams& params);

/// A stable signature of layer i (kind, params, dtypes, dims range, weight shapes) for timing caches.
std::string layer_signature(const Plan::Impl& plan, int64_t i);

}  // namespace kiln::engine
