// The cuda DeviceClock (device_clock.h).

#include "engine/backends/cuda/device_clock.h"

#include <memory>
#include <vector>

#include "engine/backends/cuda/cuda_util.h"

namespace kiln::engine::cuda {
namespace {

/// How long a hold lasts at most: longer than the host takes to enqueue a run of a few thousand layers.
constexpr uint64_t kHoldTimeoutNs = 100'000'000;

class CudaDeviceClock : public DeviceClock {
 public:
  CudaDeviceClock() {
    void* host = nullptr;
    void* device = nullptr;
    KILN_CUDA_CHECK(cudaHostAlloc(&host, sizeof(int), cudaHostAllocMapped));
    flag_ = static_cast<volatile int*>(host);
    *flag_ = 1;
    const cudaError_t e = cudaHostGetDevicePointer(&device, host, 0);
    if (e != cudaSuccess) cudaFreeHost(host);
    KILN_CUDA_CHECK(e);
    device_flag_ = static_cast<const volatile int*>(device);
  }
  ~CudaDeviceClock() override {
    *flag_ = 1;  // a gate still waiting opens
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    cudaFreeHost(const_cast<int*>(flag_));
  }
  CudaDeviceClock(const CudaDeviceClock&) = delete;
  CudaDeviceClock& operator=(const CudaDeviceClock&) = delete;

  void hold(void* stream) override {
    *flag_ = 0;
    launch_stream_gate(device_flag_, kHoldTimeoutNs, static_cast<Stream>(stream));
    check_launch("profile gate");
  }
  void release() noexcept override { *flag_ = 1; }
  size_t mark(void* stream) override {
    if (used_ == events_.size()) {
      cudaEvent_t e = nullptr;
      KILN_CUDA_CHECK(cudaEventCreate(&e));
      events_.push_back(e);
    }
    KILN_CUDA_CHECK(cudaEventRecord(events_[used_], static_cast<cudaStream_t>(stream)));
    return used_++;
  }
  double elapsed_ms(size_t a, size_t b) const override {
    KILN_CHECK(a < used_ && b < used_, Internal, "device clock: mark ", a < used_ ? b : a, " of ", used_);
    float ms = 0.0f;
    KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[a], events_[b]));
    return ms;
  }
  void reset() override { used_ = 0; }

 private:
  volatile int* flag_ = nullptr;  // pinned host memory, mapped into the device
  const volatile int* device_flag_ = nullptr;
  std::vector<cudaEvent_t> events_;
  size_t used_ = 0;
};

}  // namespace

std::unique_ptr<DeviceClock> make_device_clock() { return std::make_unique<CudaDeviceClock>(); }

}  // namespace kiln::engine::cuda
