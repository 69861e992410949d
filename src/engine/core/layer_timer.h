#pragma once
// LayerTimer: how an ExecutionContext with profiling on (set_profiling) times each step of its plan.

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/plan_impl.h"
#include "kiln/engine/layer_profile.h"

namespace kiln::engine {

/// Accumulates the time of every layer of a plan over the profiled runs: start_run() before a run,
/// begin() / end(layer) around each layer, finish_run() after it.
///   - On a backend with a device clock (cuda), in device time: start_run holds the stream, each layer's work
///     sits between two marks, finish_run releases the stream, waits for it and adds up the marks. The layers
///     run back to back at the device's pace, as in a CUDA-graph replay, not one at a time. The host's time
///     between a layer's marks (enqueuing its work, never waiting: the stream is held) is kept as well.
///   - Elsewhere (cpu) in wall time: begin and end wait for the stream (nothing on cpu).
class LayerTimer {
 public:
  explicit LayerTimer(const Plan::Impl& plan);
  void start_run(void* stream);
  void begin(void* stream);
  void end(size_t layer, void* stream);
  void finish_run(void* stream);
  /// After a run that failed: releases the stream and drops its marks, without waiting.
  void abandon_run() noexcept;
  /// The layers timed at least once, in plan order, except constants that copy nothing (not plan outputs).
  std::vector<LayerProfileRecord> records() const;

 private:
  struct Marked {
    size_t layer, begin, end;
    double host_ms;  // the host's time enqueuing the layer (between the marks)
  };
  const Plan::Impl* plan_;
  std::unique_ptr<DeviceClock> clock_;  // null: wall time
  std::vector<double> total_ms_, host_ms_;
  std::vector<uint64_t> calls_;
  std::chrono::steady_clock::time_point start_;
  size_t begin_mark_ = 0;
  std::vector<Marked> marked_;  // this run's layers (device time)
  bool holding_ = false;
};

}  // namespace kiln::engine
