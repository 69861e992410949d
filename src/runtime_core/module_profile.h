#pragma once
// Internal to the runtime layer: a CompiledModule's per-layer profile (CompiledModule::set_profiling): the
// times of its PyTorch runs, and the whole profile in program order. No ATen here.

#include <mutex>
#include <vector>

#include "kiln/engine/layer_profile.h"
#include "runtime_core/module_steps.h"

namespace kiln::runtime {

/// The times of a module's PyTorch runs while profiling: one record per run (kind "torch", tactic "libtorch",
/// named after the run's first and last node, "<first>..<last>"). Thread-safe.
class TorchRunProfile {
 public:
  explicit TorchRunProfile(const std::vector<ModuleStep>& steps);
  /// Adds one call of `ms` milliseconds to the PyTorch run at `step`.
  void add(size_t step, double ms);
  void clear();
  /// The record of the PyTorch run at `step` (calls == 0 when it was never timed).
  engine::LayerProfileRecord record(size_t step) const;

 private:
  mutable std::mutex mutex_;
  std::vector<engine::LayerProfileRecord> records_;  // per step (unused for engine steps)
};

/// A module's profile in program order: for an engine step, the records of its engine (`engine_records` is
/// indexed by engine) with names prefixed "<segment node>/"; for a PyTorch run that was timed, its one
/// record.
std::vector<engine::LayerProfileRecord> module_layer_profile(
    const std::vector<ModuleStep>& steps,
    const std::vector<std::vector<engine::LayerProfileRecord>>& engine_records,
    const TorchRunProfile& torch_runs);

}  // namespace kiln::runtime
