#pragma once
// Recording device work for replay (CUDA graphs), as ExecutionContext uses it. A backend that can record the
// work enqueued on a stream implements GraphRecorder besides Backend (the cuda backend); the context finds it
// with dynamic_cast, so backends without graphs (cpu) need nothing.

#include <functional>
#include <memory>

namespace kiln::engine {

/// Recorded device work, replayable on any stream of the device.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  /// Enqueues the recorded work on `stream` (null: the default stream) and returns without waiting.
  virtual void launch(void* stream) = 0;
};

/// Implemented by backends that can record device work.
class GraphRecorder {
 public:
  virtual ~GraphRecorder() = default;
  /// Calls `record(stream)` with a private stream in capture mode, so that what it enqueues there is
  /// recorded, not run. Nothing of it may allocate device memory or wait for the device. When `graph` already
  /// holds a recording of the same sequence of operations, it is updated in place (returns true); otherwise
  /// it is replaced by a new one (returns false). Throws kiln::Error when the work cannot be recorded (an
  /// exception from `record`, a synchronization or allocation inside it, an instantiation failure); the
  /// device is usable afterwards and `graph` is left null.
  virtual bool record(const std::function<void(void* stream)>& record,
                      std::unique_ptr<DeviceGraph>& graph) const = 0;
};

}  // namespace kiln::engine
