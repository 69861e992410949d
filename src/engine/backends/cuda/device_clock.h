#pragma once
// The cuda DeviceClock (per-layer profiles in device time, kiln/engine/backend.h): CUDA events as marks, and
// a gate kernel that holds the stream while the host enqueues a run, so that its layers run back to back and
// the time between two marks is the device's, not the host's launch pace. Shared by nvcc and g++ (launch.h
// says how).

#include <cstdint>

#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

/// Enqueues a kernel that waits until `*flag` (host memory mapped into the device) is nonzero, or until
/// `timeout_ns` have passed on the device's global timer (a run that waits for its stream, or that fills the
/// launch queue, must not wait forever).
void launch_stream_gate(const volatile int* flag, uint64_t timeout_ns, Stream stream);

}  // namespace kiln::engine::cuda
