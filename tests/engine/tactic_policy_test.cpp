// Tactic policy: reduced-precision tactics (Winograd convolution) are offered only when the build allows
// them; a candidate's one-time first-run costs (oneDNN's JIT) do not decide the choice.

#include <cstdio>

#include "engine/core/tactics.h"
#include "engine_test_util.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;

TEST(EngineTacticPolicy, ReducedPrecisionTacticsOnlyWhenAllowed) {
  std::mt19937 rng(81);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, 16, 14, 14});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* y = net.add_convolution("conv", x, Weights("w", random_tensor(DType::Float32, {16, 16, 3, 3}, rng)),
                                  Weights(), p);
  net.mark_output(net.add_activation("relu", y, ActivationKind::Relu));
  BuilderConfig config;
  config.timing_iterations = 1;
  for (int round = 0; round < 3;
       ++round) {  // timing may pick any allowed tactic: it must never pick Winograd
    for (const PlanLayerInfo& l : build(net, config)->layers())
      EXPECT_NE(l.tactic, "onednn_winograd") << l.name;
  }
}

TEST(EngineTacticPolicy, FirstRunCostsDoNotDecide) {
  // Measured on a loaded 2-core machine: oneDNN's first run of a small matmul (its JIT) 7.8-25 ms against
  // the reference kernel's 0.035-0.09 ms; once warm oneDNN took 0.006 ms and the reference 0.09 ms.
  EXPECT_TRUE(gets_second_warm_up(7.8, 0.035));
  EXPECT_TRUE(gets_second_warm_up(25.0, 0.09));
  // Within 200x of the fastest first run: always.
  EXPECT_TRUE(gets_second_warm_up(150.0, 1.0));
  // Over 100 ms and 200x the fastest: no second run (a reference kernel on a large layer).
  EXPECT_FALSE(gets_second_warm_up(1000.0, 0.5));
  EXPECT_FALSE(gets_second_warm_up(101.0, 0.1));
}

TEST(EngineTacticPolicy, SmallLinearTakesOneDnn) {
  // The tiny encoder's first projection ([2, 10, 64] x [64, 192]): oneDNN is ~15x faster than the reference
  // kernel once warm, so timing (with a fresh timing cache) must pick it whatever its first run cost. One
  // thread: with two, tests running side by side on two cores leave oneDNN's OpenMP team waiting for the
  // scheduler (12-16 ms a run), and the reference kernel rightly wins on such a loaded machine.
  std::mt19937 rng(82);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 10, 64});
  Tensor* w = net.add_constant("w", Weights("w", random_tensor(DType::Float32, {64, 192}, rng)));
  net.mark_output(net.add_matrix_multiply("linear", x, false, w, false));
  BuilderConfig config;
  config.threads = 1;
  config.timing_cache_path = ::testing::TempDir() + "/kiln_tactic_policy_timing_cache.txt";
  for (int round = 0; round < 2; ++round) {
    std::remove(config.timing_cache_path.c_str());
    bool found = false;
    for (const PlanLayerInfo& l : build(net, config)->layers()) {
      if (l.kind != LayerKind::MatrixMultiply) continue;
      found = true;
      EXPECT_EQ(l.tactic, "onednn") << l.name;
    }
    EXPECT_TRUE(found);
  }
}

}  // namespace
}  // namespace kiln::engine
