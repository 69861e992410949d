// Reduced-precision tactics (Winograd convolution) are offered only when the build allows them.

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
  Tensor* y = net.add_convolution("conv", x, Weights("w", random_tensor(DType::Float32, {16, 16, 3, 3}, rng)), Weights(), p);
  net.mark_output(net.add_activation("relu", y, ActivationKind::Relu));
  BuilderConfig config;
  config.timing_iterations = 1;
  for (int round = 0; round < 3; ++round) {  // timing may pick any allowed tactic: it must never pick Winograd
    for (const PlanLayerInfo& l : build(net, config)->layers()) EXPECT_NE(l.tactic, "onednn_winograd") << l.name;
  }
}

}  // namespace
}  // namespace kiln::engine
