#pragma once
// LayerTimer: how an ExecutionContext with profiling on (set_profiling) times each step of its plan.

#include <chrono>
#include <cstdint>
#include <vector>

#include "engine/core/plan_impl.h"
#include "kiln/engine/layer_profile.h"

namespace kiln::engine {

/// Accumulates the time of every layer of a plan: begin() before the layer's work, end(layer) after it. Both
/// wait for `stream` (Backend::synchronize, nothing on cpu), so on a device backend a layer's time is its own
/// work and launch, not whatever was queued before it.
class LayerTimer {
 public:
  explicit LayerTimer(const Plan::Impl& plan);
  void begin(void* stream);
  void end(size_t layer, void* stream);
  /// The layers timed at least once, in plan order, except constants that copy nothing (not plan outputs).
  std::vector<LayerProfileRecord> records() const;

 private:
  const Plan::Impl* plan_;
  std::vector<double> total_ms_;
  std::vector<uint64_t> calls_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kiln::engine
