// Tactic policy: reduced-precision tactics (Winograd convolution) are offered only when the build allows
// them; a small linear takes oneDNN however loaded the machine (the reference kernel is only the fallback).
// The choice logic itself is tested on measured figures in tactic_choice_test.cpp.

#include <cstdio>

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

TEST(EngineTacticPolicy, SmallLinearTakesOneDnn) {
  // The tiny encoder's first projection ([2, 10, 64] x [64, 192]): oneDNN is ~15x faster than the reference
  // kernel once warm. With a fresh timing cache and two threads (tests running side by side on two cores
  // leave oneDNN's OpenMP team waiting for the scheduler, 12-16 ms a run, and the first run pays its JIT,
  // 8-25 ms), the reference kernel used to win such contests; it is no candidate any more, so oneDNN is the
  // choice.
  std::mt19937 rng(82);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 10, 64});
  Tensor* w = net.add_constant("w", Weights("w", random_tensor(DType::Float32, {64, 192}, rng)));
  net.mark_output(net.add_matrix_multiply("linear", x, false, w, false));
  BuilderConfig config;
  config.threads = 2;
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
