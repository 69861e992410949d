// Tactic policy: reduced-precision tactics (Winograd convolution) are offered only when the build allows
// them; a small linear takes oneDNN however loaded the machine (the reference kernel is only the fallback).
// A candidate is timed with the reformats its inputs will need in the plan. The choice logic itself is
// tested on measured figures in tactic_choice_test.cpp.

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
      EXPECT_TRUE(l.tactic == "onednn" || l.tactic == "onednn_1x1") << l.name << ": " << l.tactic;
    }
    EXPECT_TRUE(found);
  }
}

TEST(EngineTacticPolicy, CandidatesAreTimedWithTheReformatsTheirInputsWillNeed) {
  // x -> channels-last (a Reformat layer: its only optimized tactic, so the format is certain) -> a `vec`
  // multiply by a per-channel scale, which follows its channels-last input (efficientnet_b0's squeeze-excite
  // `mul`) -> a 1x1 convolution whose plain tactic then needs a reformat back. Before the fix the tactic
  // selection asked the multiply's formats with Plain inputs, took it to write Plain, and timed the plain
  // convolution without that reformat (efficientnet_b0: chosen at 0.12 ms, ran 0.47 ms with it). Checked on
  // the verbose contest line, which names each candidate's reformats; which tactic wins is not checked.
  std::mt19937 rng(83);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, 24, 14, 14});
  Layer to_cl;
  to_cl.name = "to_cl";
  to_cl.kind = LayerKind::Reformat;
  to_cl.params = ReformatParams{TensorFormat::Plain, TensorFormat::ChannelsLast};
  to_cl.inputs = {x->id()};
  int64_t li = net.add_layer(to_cl);
  Tensor* cl = net.tensor(net.layers()[static_cast<size_t>(li)]->outputs[0]);
  Tensor* scale =
      net.add_constant("scale", Weights("scale", random_tensor(DType::Float32, {1, 24, 1, 1}, rng)));
  Tensor* m = net.add_elementwise("mul", cl, scale, ElementwiseOp::Mul);
  m->set_name("scaled");
  Tensor* y =
      net.add_convolution("project", m, Weights("w", random_tensor(DType::Float32, {24, 24, 1, 1}, rng)),
                          Weights(), ConvolutionParams{});
  net.mark_output(y);
  BuilderConfig config;
  config.timing_cache_path = "";
  const LoggedBuild built = build_logged(net, config);
  const std::string line = contest_line(built.log, "project");
  ASSERT_FALSE(line.empty()) << "no contest line for the convolution in:\n" << built.log;
  EXPECT_NE(line.find("onednn+reformat(scaled channels_last->plain)"), std::string::npos) << line;
  EXPECT_EQ(line.find("reformat(scaled plain->"), std::string::npos) << line;
}

}  // namespace
}  // namespace kiln::engine
