#pragma once
// engine::Plan: a built network ready to run (TensorRT's ICudaEngine) and its serialized form.
//
// Binary format (little endian), version kPlanFormatVersion:
//   magic "KILNPLAN" | u32 version | u64 payload size | payload | SHA-256 of payload (32 bytes)
// The payload holds: backend name, device string, flags, tensors (with memory formats), bindings, profiles
// (with per-profile tensor ranges and arena offsets), layers (kind, name, params, tensor ids, weights or
// their sizes, tactic, the kernel's plan data), refit map. Every length and index is validated on load; a
// truncated, corrupted or foreign file gives kiln::Error, never a crash. (Version 2 added tensor formats,
// version 3 the SHA-256, which replaced a CRC-32, version 4 the kernels' plan data, version 5 the attention
// views in AttentionParams, version 6 the tensors' dynamic ranges, version 7 the weights' INT8 scales,
// version 8 the e4m3 tensor format, version 9 no new field: cuda FP8 matmuls that write e4m3 from cuBLASLt
// itself, which an older reader would take for an error, version 10 each layer's format copies,
// Layer::format_copies, version 11 AttentionParams::kv_group: grouped-query attention.) A plan is immutable
// while contexts run (Refitter excepted).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/backend.h"
#include "kiln/engine/layers.h"
#include "kiln/engine/profile.h"
#include "kiln/support/host_tensor.h"

namespace kiln::engine {

inline constexpr uint32_t kPlanFormatVersion = 11;
/// The oldest plan format this build reads: a version-5 plan (before dynamic ranges) loads with no ranges, so .kiln
/// archives written before INT8 keep loading.
inline constexpr uint32_t kOldestPlanFormatVersion = 5;

/// A network input or output as the user binds it.
struct Binding {
  std::string name;
  DType dtype = DType::Float32;
  Dims dims;  // -1 for dynamic
  bool is_input = false;
  bool data_dependent = false;  // output shape known only after execution (needs an OutputAllocator)
};

/// Summary of one plan layer (for tests, logs and `kiln inspect`).
struct PlanLayerInfo {
  std::string name;
  LayerKind kind;
  std::string tactic;
  std::vector<std::string> inputs, outputs;
  std::string detail;  // e.g. "post_ops=[sum, relu]" or the fused program
  std::vector<TensorFormat> input_formats, output_formats;  // memory formats of the tensors above
  std::vector<DType> output_dtypes;  // the precision the layer computes its outputs in
  uint64_t weight_bytes = 0;         // bytes of the weights the plan holds for the layer (0 when stripped)
  bool int8 = false;                 // whether its tactic computes in INT8 (Tactic::int8)
  bool fp8 = false;                  // whether its tactic computes in FP8 E4M3 (Tactic::fp8)

  /// The precision it computes in, for reports: "int8" or "fp8" for a quantized tactic, else the dtype of its
  /// first output ("f16", "f32", ...; "?" without outputs).
  std::string compute_precision() const {
    if (int8) return "int8";
    if (fp8) return "fp8";
    return output_dtypes.empty() ? "?" : dtype_name(output_dtypes.front());
  }
};

class Plan {
 public:
  struct Impl;
  explicit Plan(std::unique_ptr<Impl> impl);
  ~Plan();

  /// Serializes the plan (weights left out when built with strip_weights).
  std::vector<uint8_t> serialize() const;
  /// Serializes the plan with its named (refittable) weights left out or not, whatever it was built with: a
  /// weightless plan of a refittable build is what an engine cache stores (refit it after loading).
  std::vector<uint8_t> serialize(bool strip_weights) const;
  /// Bytes serialize() writes (without computing the checksum).
  size_t serialized_size() const;
  /// Loads a serialized plan and creates its kernels on a backend of the recorded kind. Throws
  /// kiln::Error on any malformed input, a foreign backend, or a device mismatch of tactics.
  static std::shared_ptr<Plan> deserialize(const std::vector<uint8_t>& bytes, const BackendOptions& options = {});

  const std::vector<Binding>& bindings() const;
  /// The binding called `name`; throws kiln::Error when there is none.
  const Binding& binding(const std::string& name) const;
  int num_profiles() const;
  /// The input ranges of profile `index`.
  const OptimizationProfile& profile(int index) const;
  const std::string& backend_name() const;
  /// The device string the plan was built for.
  const std::string& device() const;
  /// The device string of the backend its kernels run on now (a CPU backend's names its thread count).
  std::string running_device() const;
  std::vector<PlanLayerInfo> layers() const;
  /// Scratch bytes a context reserves for the kernels (the largest any kernel asked for).
  uint64_t workspace_bytes() const;
  /// Activation arena bytes of profile `index` (the memory plan's peak).
  size_t arena_bytes(int index) const;
  /// Sum of the largest set of simultaneously live activation bytes of profile `index` (a lower bound
  /// for the arena).
  size_t live_bytes_lower_bound(int index) const;
  /// Names of refittable weights.
  std::vector<std::string> weight_names() const;
  /// The named weight's value as the plan holds it (after the builder's transformations, if any), sharing the
  /// plan's bytes; undefined when the plan has no weight of that name or holds it stripped.
  HostTensor weight(const std::string& name) const;
  bool refittable() const;
  /// Whether weights were stripped (and not yet refit): such a plan cannot execute.
  bool weights_missing() const;
  /// Whether serialize() leaves the named weights out (the build's strip_weights; a plan loaded from a stripped
  /// file keeps that flag until told otherwise, e.g. after its refit by an engine cache hit).
  bool strip_weights() const;
  void set_strip_weights(bool strip);

  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  std::vector<uint8_t> serialize_payload(bool strip_weights) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::engine
