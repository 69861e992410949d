// Activation memory sized for the shapes actually run (ExecutionContext plans its arena per input dims and
// grows it): a symbol range up to 2^28 made every context allocate the max-shape arena (137 GB) up front
// before. And a build whose max-shape plan the plan loader would reject fails at build time.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine_test_util.h"
#include "kiln/engine/execution_context.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {

using testing::build;
using testing::random_tensor;

// x [-1, 64] -> softmax -> softmax -> softmax (rows): two intermediates live in the arena (softmax does not
// fuse).
std::shared_ptr<Plan> chain(int64_t max_rows) {
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {-1, 64});
  Tensor* y = net.add_softmax("s1", x, 1);
  y = net.add_softmax("s2", y, 1);
  y = net.add_softmax("s3", y, 1);
  y->set_name("out");
  net.mark_output(y);
  BuilderConfig config;
  OptimizationProfile profile;
  profile.set_dimensions("x", {1, 64}, {2, 64}, {max_rows, 64});
  config.profiles = {profile};
  return build(net, config);
}

// Row softmax in double precision.
std::vector<double> softmax_rows(const std::vector<double>& v, int64_t cols) {
  std::vector<double> out(v.size());
  for (size_t r = 0; r < v.size() / cols; ++r) {
    double m = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, v[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(v[r * cols + c] - m);
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = std::exp(v[r * cols + c] - m) / sum;
  }
  return out;
}

// Runs `ctx` on x; checks the three softmaxes within float rounding (rtol 1e-4, atol 1e-6: values near 1/64).
void run_and_check(ExecutionContext& ctx, const HostTensor& x) {
  HostTensor out(DType::Float32, x.sizes());
  ctx.set_input_shape("x", x.sizes());
  ctx.set_tensor_address("x", const_cast<uint8_t*>(x.data()));
  ctx.set_tensor_address("out", out.mutable_data());
  ctx.execute();
  std::vector<double> want = softmax_rows(softmax_rows(softmax_rows(testing::values(x), 64), 64), 64);
  testing::expect_close(out, want, 1e-4, 1e-6, "softmax chain");
}

TEST(EngineArena, SizedForTheShapesRunNotTheRangeMax) {
  auto plan = chain(int64_t{1} << 28);
  // The stored max-shape plan covers 2^28 rows (64 GiB per intermediate) ...
  EXPECT_GE(plan->arena_bytes(0), (size_t{1} << 28) * 64 * 4);
  ExecutionContext ctx(plan);
  EXPECT_EQ(ctx.arena_bytes(), 0u);  // ... but a context reserves nothing before it runs
  std::mt19937 rng(7);
  run_and_check(ctx, random_tensor(DType::Float32, {2, 64}, rng));
  const size_t small = ctx.arena_bytes();
  EXPECT_GT(small, 0u);
  EXPECT_LE(small, 2u * 2 * 64 * 4 + 2 * 64);  // two live 2x64 floats, each rounded up to 64 bytes
  run_and_check(ctx, random_tensor(DType::Float32, {300, 64}, rng));
  EXPECT_GE(ctx.arena_bytes(), size_t{300} * 64 * 4);  // grown for the larger run
  run_and_check(ctx, random_tensor(DType::Float32, {3, 64}, rng));  // smaller again: re-planned, still right
}

TEST(EngineArena, BuildOverTheArenaLimitFailsClearly) {
  // 2^40 rows of 64 floats: 2^48 bytes per intermediate, beyond what a plan file may hold (1 TiB).
  try {
    chain(int64_t{1} << 40);
    FAIL() << "built a plan the loader would reject";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("narrow the input ranges"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::engine
