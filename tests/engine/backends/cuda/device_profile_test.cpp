// Per-layer profiles in device time on cuda (ExecutionContext::set_profiling with the cuda DeviceClock,
// engine/core/layer_timer.h). With a GPU (EngineCuda.*, label gpu through kiln_engine_gpu_tests):
//   - the clock: marks around device work give its elapsed time, a hold the host never releases times out
//     (the stream completes) instead of hanging;
//   - a profiled plan: every layer once per execute, in device time, the same results as without profiling,
//     the layers' device times sum to at most the executes' wall time, and each layer's host enqueue time is
//     positive, below the gate's timeout (it never waited for the device) and sums to at most the wall time.
// No speed is asserted.

#if KILN_HAVE_CUDA

#include <chrono>
#include <cstring>

#include "engine/engine_test_util.h"
#include "kiln/engine/layer_profile.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;

TEST(EngineCuda, DeviceClockMarksDeviceWorkAndAHoldTimesOut) {
  KILN_REQUIRE_GPU();
  const Backend& b = *shared_backend("cuda");
  std::unique_ptr<DeviceClock> clock = b.device_clock();
  ASSERT_NE(clock, nullptr);
  DeviceBuffers dev{&b, {}};
  const size_t bytes = size_t{64} << 20;
  void* src = dev.add(bytes);
  void* dst = dev.add(bytes);
  clock->hold(nullptr);
  const size_t a = clock->mark(nullptr);
  for (int i = 0; i < 4; ++i) b.copy(dst, src, bytes, CopyKind::DeviceToDevice, nullptr);
  const size_t c = clock->mark(nullptr);
  clock->release();
  b.synchronize(nullptr);
  EXPECT_GT(clock->elapsed_ms(a, c), 0.0) << "four 64 MiB copies took no device time";
  // A hold nobody releases opens after its timeout: the stream completes.
  clock->reset();
  clock->hold(nullptr);
  const size_t d = clock->mark(nullptr);
  b.synchronize(nullptr);
  EXPECT_EQ(d, 0u);
  clock->release();
}

TEST(EngineCuda, ProfileTimesEveryLayerInDeviceTime) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(601);
  const int64_t n = 64, k = 256;
  Network net;
  Tensor* y = net.add_input("x", DType::Float32, {n, k});
  for (int i = 0; i < 3; ++i) {
    const std::string name = "fc" + std::to_string(i);
    Tensor* w = net.add_constant(name + ".w",
                                 Weights(name + ".w", random_tensor(DType::Float32, {k, k}, rng, -0.1, 0.1)));
    y = net.add_matrix_multiply(name, y, false, w, false);
    y = net.add_activation(name + "_relu", y, ActivationKind::Relu);
  }
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config;
  config.backend = "cuda";
  config.timing_iterations = 0;
  auto plan = build(net, config);
  const Backend& b = *shared_backend("cuda");
  HostTensor x = random_tensor(DType::Float32, {n, k}, rng);
  DeviceBuffers dev{&b, {}};
  void* xd = dev.add(x.nbytes());
  void* yd = dev.add(x.nbytes());
  b.copy(xd, x.data(), x.nbytes(), CopyKind::HostToDevice, nullptr);
  auto output = [&](ExecutionContext& ctx) {
    ctx.set_input_shape("x", x.sizes());
    ctx.set_tensor_address("x", xd);
    ctx.set_tensor_address("y", yd);
    ctx.execute();
    HostTensor out(DType::Float32, {n, k});
    b.copy(out.mutable_data(), yd, out.nbytes(), CopyKind::DeviceToHost, nullptr);
    b.synchronize(nullptr);
    return out;
  };
  ExecutionContext plain(plan);
  const HostTensor want = output(plain);
  ExecutionContext profiled(plan);
  profiled.set_profiling(true);
  constexpr int kRuns = 4;
  HostTensor got;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) got = output(profiled);
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0) << "profiling changed the results";
  const std::vector<LayerProfileRecord> profile = profiled.layer_profile();
  ASSERT_FALSE(profile.empty());
  double sum_ms = 0.0, host_sum_ms = 0.0;
  for (const LayerProfileRecord& r : profile) {
    EXPECT_TRUE(r.device_time) << r.name;
    EXPECT_EQ(r.calls, static_cast<uint64_t>(kRuns)) << r.name;
    EXPECT_GE(r.total_ms, 0.0) << r.name;
    // Every layer enqueues something (a launch takes the host microseconds) and never waits for the held
    // stream (that would take the gate's 100 ms timeout).
    EXPECT_GT(r.host_ms, 0.0) << r.name;
    EXPECT_LT(r.host_ms / kRuns, 50.0) << r.name << " waited for the device while enqueuing";
    sum_ms += r.total_ms;
    host_sum_ms += r.host_ms;
    std::printf("device profile: %-24s %-16s %.4f ms/run, host %.4f ms/run\n", r.name.c_str(), r.tactic.c_str(),
                r.total_ms / kRuns, r.host_ms / kRuns);
  }
  EXPECT_GT(sum_ms, 0.0);
  EXPECT_LE(sum_ms, wall_ms) << "the layers' device time exceeds the executes' wall time";
  EXPECT_LE(host_sum_ms, wall_ms) << "the layers' enqueue time exceeds the executes' wall time";
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
