#pragma once
// Per-layer profiles (TensorRT's IProfiler, trtexec --dumpProfile): the time each step of a plan took over
// the executes that ran with profiling on (ExecutionContext::set_profiling), in device time on cuda, and
// merging profiles of several contexts.

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::engine {

/// The accumulated time of one step of a plan (or, in a module's profile, of one PyTorch run).
struct LayerProfileRecord {
  /// The layer's name in the plan; the builder's reformat layers are "<tensor>/reformat".
  std::string name;
  /// layer_kind_name() of the layer ("convolution", "reformat", ...); other producers of records name their
  /// own kind (a module's PyTorch runs: "torch").
  std::string kind;
  /// The layer's tactic; "host" for shape arithmetic evaluated on the host (its value is uploaded), "copy"
  /// for a constant copied into a plan output.
  std::string tactic;
  /// Milliseconds over all calls, and the number of calls (one per execute that ran the step).
  double total_ms = 0.0;
  uint64_t calls = 0;
  /// Timed on the device (cuda: marks around each layer of runs whose layers went back to back, as in a
  /// CUDA-graph replay), not by the host's clock with a wait after every layer.
  bool device_time = false;
  /// Milliseconds over all calls the host spent enqueuing the layer's work (device-time profiles only, where
  /// the host never waits for the device: what a run without CUDA graphs pays per layer; 0 otherwise).
  double host_ms = 0.0;
};

/// Adds the records of `from` into `into`: a record whose name `into` already holds adds its time and calls
/// to that one; the others are appended in their order. For summing the profiles of several contexts of one
/// plan.
void accumulate_layer_profile(std::vector<LayerProfileRecord>& into,
                              const std::vector<LayerProfileRecord>& from);

}  // namespace kiln::engine
