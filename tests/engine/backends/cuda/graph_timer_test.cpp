// graph_timer.h: the device time of recorded work, which the builder's tactic timing and the convolution's
// cuDNN algorithm timing use on cuda. GPU only (EngineCuda.*, label gpu through kiln_engine_gpu_tests).
//
// Bounds: a 64 MiB memset takes at least 64 MiB / 10 TB/s = 6.7 us on any GPU (no GPU writes faster than
// 10 TB/s) and well under 50 ms; a 4 KiB memset takes a few microseconds, so 0.5 ms is a bound that a timer
// counting the enqueue's 2 ms host sleep (as wall-clock timing of single runs did) cannot meet.

#if KILN_HAVE_CUDA

#include <chrono>
#include <thread>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/graph_timer.h"
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

constexpr size_t kBig = size_t{64} << 20, kSmall = 4096;

TEST(EngineCuda, GraphTimerMeasuresDeviceTimeNotHostTime) {
  KILN_REQUIRE_GPU();
  cuda::DeviceBuffer buf(kBig);
  float big =
      cuda::graph_time_ms([&](cudaStream_t s) { KILN_CUDA_CHECK(cudaMemsetAsync(buf.data(), 1, kBig, s)); });
  float small = cuda::graph_time_ms(
      [&](cudaStream_t s) { KILN_CUDA_CHECK(cudaMemsetAsync(buf.data(), 2, kSmall, s)); });
  EXPECT_GT(big, 6.7e-3f);
  EXPECT_LT(big, 50.0f);
  EXPECT_LT(small, big);
  // The host's costs of the enqueue are not part of the time: 2 ms of host work per call, a tiny kernel.
  int calls = 0;
  float hosty = cuda::graph_time_ms([&](cudaStream_t s) {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    KILN_CUDA_CHECK(cudaMemsetAsync(buf.data(), 3, kSmall, s));
  });
  EXPECT_LT(hosty, 0.5f);
  EXPECT_EQ(calls, 1 + 8);  // one unrecorded warm-up, then the 8 recorded calls; replays call nothing
}

TEST(EngineCuda, GraphTimerRefusesWorkThatWaitsAndLeavesTheDeviceUsable) {
  KILN_REQUIRE_GPU();
  cuda::DeviceBuffer buf(kSmall);
  // Waiting for the stream cannot be recorded: a kiln::Error, not a crash or a stuck capture.
  EXPECT_THROW(cuda::graph_time_ms([&](cudaStream_t s) {
                 KILN_CUDA_CHECK(cudaMemsetAsync(buf.data(), 0, kSmall, s));
                 KILN_CUDA_CHECK(cudaStreamSynchronize(s));
               }),
               Error);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // An exception from the work itself, during recording, likewise.
  int calls = 0;
  EXPECT_THROW(cuda::graph_time_ms([&](cudaStream_t s) {
                 KILN_CUDA_CHECK(cudaMemsetAsync(buf.data(), 0, kSmall, s));
                 if (++calls == 3) KILN_FAIL(Internal, "refused on the third call");
               }),
               Error);
  // The device and the timer still work.
  float ms = cuda::graph_time_ms(
      [&](cudaStream_t s) { KILN_CUDA_CHECK(cudaMemsetAsync(buf.data(), 1, kSmall, s)); });
  EXPECT_GT(ms, 0.0f);
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
