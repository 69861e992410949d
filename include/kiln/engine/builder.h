#pragma once
// engine::Builder + BuilderConfig: turn a Network into an optimized Plan for one backend (TensorRT's
// IBuilder / IBuilderConfig). Passes, in order: constant folding, dead-layer removal, shuffle
// elimination, fusions (conv/matmul + bias + activation + residual add; pointwise chains), attention views,
// precision assignment, backend support check, tactic selection by timing, activation memory planning.

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/backend.h"
#include "kiln/engine/network.h"
#include "kiln/engine/plan.h"
#include "kiln/engine/profile.h"

namespace kiln::engine {

/// Precisions the builder may use. INT8 lets convolution and matrix-multiply layers whose tensors carry
/// dynamic ranges (Tensor::set_dynamic_range; calibration.h computes them) take INT8 tactics where they time
/// faster (int8_policy.h says which layers may); everything else stays in the floating precision. FP8 does
/// the same with FP8 E4M3 tactics (the cuda backend's cuBLASLt matmuls on GPUs of compute capability 8.9 and
/// up): the same layers, the same ranges (scale = amax / 448), outputs in the layer's floating dtype.
enum class Precision : uint8_t { FP32, FP16, BF16, INT8, FP8 };
const char* precision_name(Precision precision);

struct BuilderConfig {
  /// The backend to build for (a name in backend_registry()).
  std::string backend = "cpu";
  /// Precisions allowed; FP32 is always allowed. In weakly typed mode the builder runs floating layers in
  /// the lowest allowed precision the backend supports for that layer kind (fp16 before bf16), casting at
  /// network boundaries; in strongly typed mode tensor dtypes are kept exactly as declared.
  std::vector<Precision> precisions = {Precision::FP32};
  bool strongly_typed = false;
  /// One profile per set of input ranges; required when an input has a -1 dim.
  std::vector<OptimizationProfile> profiles;
  /// Upper bound on per-kernel scratch memory; tactics needing more are skipped.
  size_t workspace_limit = size_t{1} << 30;
  /// Timing cache file (read if it exists, written after the build); empty: no file.
  std::string timing_cache_path;
  /// Keep named weights replaceable by a Refitter (folding that would merge named weights is skipped).
  bool refittable = false;
  /// Leave weights out of the serialized plan (refit them after loading).
  bool strip_weights = false;
  /// Backend threads (0 = all cores).
  int threads = 0;
  /// Timing: runs per candidate (after one warm-up); 0 disables timing (first tactic wins).
  int timing_iterations = 3;
  /// Let tactic selection use tactics less precise than the layer's dtype (Tactic::reduced_precision: Winograd
  /// convolution on the CPU); off by default, so fp32 engines compute as fp32.
  bool allow_reduced_precision_tactics = false;
  /// Let tactic selection use TF32 tactics for fp32 layers (Tactic::tf32: cuBLASLt matmuls in FAST_TF32, cuDNN
  /// convolutions with tensor-op math), chosen by timing like any other candidate. Off by default (unlike
  /// TensorRT), so fp32 engines compute as fp32.
  bool allow_tf32 = false;
  /// How the runtime will run the engine on a backend that records device work (cuda): through CUDA graphs
  /// when its input dims are all static (`graphs_for_static`, the default) or dynamic (`graphs_for_dynamic`).
  /// An engine that will run without them pays the host's enqueue time of every layer at every run, so its
  /// tactic contests count it (a candidate's run costs max(device time, host enqueue time)); one replayed
  /// as a graph counts device time only.
  bool graphs_for_static = true;
  bool graphs_for_dynamic = false;
  /// Let Attention layers read q/k/v through strided views of the tensors that reshape/permute/select chains
  /// copied them from, and write their output in the layout of a following permute (static shapes only); the
  /// bypassed copies go away. On by default; off builds the copies as the network has them.
  bool attention_views = true;
  /// Sample inputs of a weakly typed fp16/bf16 build: one map (input name -> array of the binding's dtype,
  /// dims within profile 0) per sample. The builder runs the plan on them, compares each layer's output with
  /// an fp32 build's on the same inputs, and rebuilds the first layer along each path whose output is
  /// non-finite only in the reduced type in fp32 (at most kMaxPrecisionProbeRounds times;
  /// precision_policy.h), the layers whose output is below the reduced type's range, and, where the outputs' cosine
  /// to fp32's is still below min_output_cosine, the earliest layers (docs/engine.md, step 6). Empty (or an fp32 or strongly typed build): no check, and the plan is what it would
  /// be without it. Run time is unaffected.
  std::vector<std::map<std::string, HostTensor>> sample_inputs;
  /// The accuracy rule's bar, in (0, 1]: with sample inputs, a reduced build whose network outputs have a cosine
  /// similarity to the fp32 build's below it keeps its earliest layers in fp32, doubling their number, until the
  /// outputs reach it (the rounding of an early layer is what everything after it amplifies).
  double min_output_cosine = 0.999;
  /// With INT8: let the first and the last convolution / matrix-multiply layer of the network take INT8
  /// tactics too (off by default: they see the raw input and make the logits, where quantization costs most
  /// accuracy).
  bool int8_first_last = false;
  /// With INT8, explicit quantization (the network's ranges came from the program's quantize/dequantize
  /// nodes, TensorRT's Q/DQ networks): a layer the INT8 policy allows takes an INT8 tactic whenever one
  /// applies, not only where INT8 times faster.
  bool int8_explicit = false;
  /// Log every pass, fusion and tactic choice at Info (as --verbose does).
  bool verbose = false;

  /// Whether `precision` is among `precisions`.
  bool allows(Precision precision) const {
    return std::find(precisions.begin(), precisions.end(), precision) != precisions.end();
  }
};

/// Rebuilds a sample-input check (BuilderConfig::sample_inputs) may do before it gives up.
inline constexpr int kMaxPrecisionProbeRounds = 4;

/// Builds plans. Stateless apart from its config; build() may be called repeatedly.
class Builder {
 public:
  explicit Builder(BuilderConfig config);
  const BuilderConfig& config() const { return config_; }
  /// Builds a plan; throws kiln::Error naming the layer when a layer is unsupported or a profile is invalid.
  std::shared_ptr<Plan> build(const Network& network) const;

 private:
  BuilderConfig config_;
};

}  // namespace kiln::engine
