#pragma once
// Device time of a piece of GPU work, without the host's launch costs: the work is recorded `repeats` times
// in a row into a CUDA graph on a private stream, and the graph's replays are timed with events. At batch 1 a
// legacy cuDNN call costs the host more (tens of microseconds) than its kernels cost the GPU, and what a
// kernel costs inside an engine replayed as a CUDA graph (or queued ahead of the GPU) is the device time, so
// choices between algorithms compare that.

#include <cuda_runtime.h>

#include <functional>

namespace kiln::engine::cuda {

/// Milliseconds per call of `enqueue(stream)`, the median of `samples` replays of a graph holding `repeats`
/// calls. `enqueue` runs once unrecorded first (so that lazily made library plans exist before recording) and
/// must only enqueue work on the stream it is given. Throws kiln::Error when the work fails or cannot be
/// recorded; the device stays usable.
float graph_time_ms(const std::function<void(cudaStream_t)>& enqueue, int repeats = 8, int samples = 5);

}  // namespace kiln::engine::cuda
