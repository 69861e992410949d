#pragma once
// The libtorch device a compiled module runs on, and the CUDA stream engines share with libtorch.
// Internal to the runtime layer: includes c10.

#include <string>

#include <c10/core/Device.h>

namespace kiln::runtime {

/// The device the engines of `backend` take tensors on: kCPU for "cpu", the current CUDA device for "cuda".
/// Throws kiln::Error(Unsupported) for another backend, or for "cuda" when this libtorch has no CUDA or the
/// machine no GPU.
c10::Device backend_device(const std::string& backend);

/// The stream libtorch queues work on for `device` (a cudaStream_t on CUDA) — engines execute on it so that
/// engine and libtorch work stay ordered without host synchronization. Null on the CPU.
void* current_stream(const c10::Device& device);

/// Waits until the work queued on `device`'s current stream is done (no-op on the CPU).
void synchronize_stream(const c10::Device& device);

}  // namespace kiln::runtime
