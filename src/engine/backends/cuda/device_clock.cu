// The gate kernel of the cuda DeviceClock (device_clock.h).

#include "engine/backends/cuda/device_clock.h"

namespace kiln::engine::cuda {
namespace {

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void stream_gate_kernel(const volatile int* flag, uint64_t timeout_ns) {
  const uint64_t start = global_ns();
  while (*flag == 0 && global_ns() - start < timeout_ns) {
#if __CUDA_ARCH__ >= 700
    __nanosleep(1000);
#endif
  }
}

}  // namespace

void launch_stream_gate(const volatile int* flag, uint64_t timeout_ns, Stream stream) {
  stream_gate_kernel<<<1, 1, 0, stream>>>(flag, timeout_ns);
}

}  // namespace kiln::engine::cuda
