// ExecutionContext::set_profiling on the cpu backend: every step of the plan (the builder's reformat layers
// included) gets one call per execute, the times are consistent with the wall time of the executes, results
// are the same with profiling on, and accumulate_layer_profile sums profiles by layer name.
//
// Plans are built with timing_iterations = 0 (first tactic wins: "onednn_blocked" convolutions with reformat
// layers at the bindings), so the plan's structure does not depend on timing. No speed is asserted: the only
// time check is that the layers' times, measured inside the executes, sum to at most their wall time.

#include <chrono>
#include <cstring>

#include "engine_test_util.h"
#include "kiln/engine/layer_profile.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;

constexpr int64_t kC = 16, kH = 6, kW = 7;
constexpr int kRuns = 5;

/// conv-relu, conv + residual(x), relu: a convolution chain the cpu backend runs on blocked tensors.
std::shared_ptr<Plan> conv_plan(std::mt19937& rng) {
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, kC, kH, kW});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  auto weights = [&](const std::string& name) {
    return Weights(name + ".weight", random_tensor(DType::Float32, {kC, kC, 3, 3}, rng, -0.1, 0.1));
  };
  auto bias = [&](const std::string& name) {
    return Weights(name + ".bias", random_tensor(DType::Float32, {kC}, rng));
  };
  Tensor* y = net.add_convolution("conv1", x, weights("conv1"), bias("conv1"), p);
  y = net.add_activation("relu1", y, ActivationKind::Relu);
  y = net.add_convolution("conv2", y, weights("conv2"), bias("conv2"), p);
  y = net.add_elementwise("add", y, x, ElementwiseOp::Add);
  y = net.add_activation("relu2", y, ActivationKind::Relu);
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config;
  config.timing_iterations = 0;
  return build(net, config);
}

/// A context of `plan` bound to `in` and `out` (host buffers: cpu).
std::unique_ptr<ExecutionContext> bound_context(const std::shared_ptr<Plan>& plan, HostTensor& in,
                                                HostTensor& out) {
  auto context = std::make_unique<ExecutionContext>(plan);
  context->set_input_shape("x", in.sizes());
  context->set_tensor_address("x", in.mutable_data());
  context->set_tensor_address("y", out.mutable_data());
  return context;
}

TEST(EngineLayerProfile, EveryLayerOncePerExecuteWithinTheWallTime) {
  std::mt19937 rng(5);
  auto plan = conv_plan(rng);
  HostTensor in = random_tensor(DType::Float32, {1, kC, kH, kW}, rng);
  HostTensor plain(DType::Float32, {1, kC, kH, kW}), profiled(DType::Float32, {1, kC, kH, kW});
  bound_context(plan, in, plain)->execute();

  auto context = bound_context(plan, in, profiled);
  EXPECT_FALSE(context->profiling());
  EXPECT_TRUE(context->layer_profile().empty());
  context->set_profiling(true);
  EXPECT_TRUE(context->profiling());
  // The first execute infers shapes (run), the others reuse them (run_cached): both paths are timed.
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) context->execute();
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(std::memcmp(plain.data(), profiled.data(), plain.nbytes()), 0) << "profiling changed the results";

  const std::vector<PlanLayerInfo> layers = plan->layers();
  const std::vector<LayerProfileRecord> profile = context->layer_profile();
  ASSERT_EQ(profile.size(), layers.size()) << "one record per layer (this plan has no constants)";
  double sum_ms = 0.0;
  int reformats = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    SCOPED_TRACE(layers[i].name);
    EXPECT_EQ(profile[i].name, layers[i].name);
    EXPECT_EQ(profile[i].kind, layer_kind_name(layers[i].kind));
    EXPECT_EQ(profile[i].tactic, layers[i].tactic);
    EXPECT_EQ(profile[i].calls, static_cast<uint64_t>(kRuns));
    EXPECT_GE(profile[i].total_ms, 0.0);
    sum_ms += profile[i].total_ms;
    reformats += profile[i].kind == "reformat";
  }
  EXPECT_GE(reformats, 1) << "the reformat layers the builder inserted are profiled too";
  // The layers' intervals are disjoint and lie inside the wall interval; 1e-6 ms covers the rounding of the
  // sum.
  EXPECT_LE(sum_ms, wall_ms + 1e-6);

  // Turned off, the profile stays readable and grows no more; turned on again, it starts empty.
  context->set_profiling(false);
  context->execute();
  ASSERT_EQ(context->layer_profile().size(), layers.size());
  EXPECT_EQ(context->layer_profile()[0].calls, static_cast<uint64_t>(kRuns));
  context->set_profiling(true);
  EXPECT_TRUE(context->layer_profile().empty());
  context->execute();
  EXPECT_EQ(context->layer_profile()[0].calls, 1u);
}

TEST(EngineLayerProfile, AccumulateSumsByNameAndAppendsNewNames) {
  std::vector<LayerProfileRecord> into = {{"a", "convolution", "onednn", 1.0, 2},
                                          {"b", "activation", "ref", 0.5, 2}};
  accumulate_layer_profile(into, {{"b", "activation", "ref", 0.25, 1}, {"c", "reformat", "ref", 0.125, 1}});
  ASSERT_EQ(into.size(), 3u);
  EXPECT_EQ(into[0].calls, 2u);
  EXPECT_DOUBLE_EQ(into[1].total_ms, 0.75);
  EXPECT_EQ(into[1].calls, 3u);
  EXPECT_EQ(into[2].name, "c");
  EXPECT_EQ(into[2].calls, 1u);
}

}  // namespace
}  // namespace kiln::engine
