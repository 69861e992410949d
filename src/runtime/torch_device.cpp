// Devices and streams through c10's device-generic interfaces: this layer links no CUDA library itself; with a
// CUDA build of libtorch, its CUDA device-guard implementation answers.

#include "runtime/torch_device.h"

#include <ATen/Context.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#include "kiln/support/error.h"

// c10::Stream::native_handle() (the cudaStream_t behind a stream) exists from libtorch 2.3 on.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define KILN_TORCH_STREAM_HANDLE 1
#else
#define KILN_TORCH_STREAM_HANDLE 0
#endif

namespace kiln::runtime {

c10::Device backend_device(const std::string& backend) {
  if (backend == "cpu") return c10::Device(c10::kCPU);
  KILN_CHECK(backend == "cuda", Unsupported, "backend '", backend, "' has no libtorch device (cpu, cuda)");
  KILN_CHECK(KILN_TORCH_STREAM_HANDLE, Unsupported, "a cuda module needs libtorch >= 2.3 built with CUDA; this is ",
             TORCH_VERSION);
  KILN_CHECK(at::hasCUDA(), Unsupported,
             "the module was built for the cuda backend, but this libtorch has no CUDA or the machine has no GPU");
  const c10::impl::DeviceGuardImplInterface* guard = c10::impl::getDeviceGuardImpl(c10::kCUDA);
  return guard->getDevice();
}

void* current_stream(const c10::Device& device) {
  if (device.is_cpu()) return nullptr;
#if KILN_TORCH_STREAM_HANDLE
  return c10::impl::getDeviceGuardImpl(device.type())->getStream(device).native_handle();
#else
  KILN_FAIL(Unsupported, "libtorch ", TORCH_VERSION, " cannot give its ", device.str(), " stream");
#endif
}

void synchronize_stream(const c10::Device& device) {
  if (device.is_cpu()) return;
  c10::impl::getDeviceGuardImpl(device.type())->getStream(device).synchronize();
}

}  // namespace kiln::runtime
