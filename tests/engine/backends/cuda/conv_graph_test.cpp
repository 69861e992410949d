// The cuda "cudnn_graph" convolution tactic (cuDNN's graph API, conv_graph.cpp); nhwc_test.cpp covers it
// against the cpu backend on the NHWC suite's cases (fp16 / bf16 plans take it).
//
// Without a GPU (EngineCudaConvGraph.*): which layers it takes, and its formats.
// With a GPU (EngineCuda.*):
//   - the engine configuration tuned at build is stored in the plan data (layout 2, its heuristic rank) and a
//     kernel created from it computes bit-identical outputs; foreign or corrupt data falls back to the
//     heuristic's first;
//   - a NaN in the input stays NaN through ReLU, fused (fp16) or in the post-op pass (bf16), as torch.relu;
//   - dynamic batch: one plan per input shape, each against the cpu backend;
//   - plans are made once per thread: the one made at creation serves every context on the creating thread
//     (none made at their first calls), another thread makes one of its own;
//   - pointers at an element offset (views) are a clear error;
//   - a layer reused within a timed build starts from the engine the earlier layer tuned.
// Tolerances: as nhwc_test.cpp (max |cuda - cpu| <= 1e-2 of max |cpu| in fp16: inputs and weights rounded to
// fp16, 2^-11 relative each, over reductions of up to 144 products; heuristic vs tuned engines 1e-2
// likewise).

#if KILN_HAVE_CUDA

#include <cmath>
#include <limits>
#include <thread>

#include "engine/backends/cuda/conv_test_util.h"
#include "engine/backends/cuda/linalg/conv_plan_data.h"
#include "kiln/engine/tactic_stats.h"

namespace kiln::engine {
namespace {
using namespace testing;
using namespace cuda_conv_test;
using cuda::ConvPlanData;

// ---- Without a GPU ----

TEST(EngineCudaConvGraph, TakesHalfPrecisionForwardConvolutionsChannelsLast) {
  const KernelRow* graph = row(LayerKind::Convolution, "cudnn_graph");
  if (!graph) GTEST_SKIP() << "built without cuDNN";
  ConvolutionParams p = pad1();
  p.post_ops = {sum_op(), relu_op()};
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    auto t = conv_layer(dt, p, 1, TensorFormat::Plain, true);
    std::string why;
    EXPECT_EQ(graph->applies(t->info, &why), dt != DType::Float32) << dtype_name(dt) << ": " << why;
    TacticFormats f = graph->formats_for(t->info);
    EXPECT_EQ(f.inputs, std::vector<TensorFormat>(2, TensorFormat::ChannelsLast));
    EXPECT_EQ(f.outputs, std::vector<TensorFormat>(1, TensorFormat::ChannelsLast));
  }
  ConvolutionParams transposed = pad1();
  transposed.transposed = true;
  EXPECT_FALSE(
      graph->applies(conv_layer(DType::Float16, transposed, 0, TensorFormat::Plain, true)->info, nullptr));
  EXPECT_FALSE(
      graph->applies(conv_layer(DType::Float16, pad1(1), 0, TensorFormat::Plain, true, 3)->info, nullptr));
}

// ---- On the GPU ----

TEST(EngineCuda, ConvGraphTunedEngineIsStoredAndReused) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn_graph")) GTEST_SKIP() << "built without cuDNN";
  const Backend& b = *shared_backend("cuda");
  std::mt19937 rng(91);
  ResidualConvCase rc(DType::Float16, TensorFormat::ChannelsLast, rng);

  cuda::ConvStats s0 = cuda::conv_stats();
  rc.t->info.tune = true;
  std::unique_ptr<Kernel> tuned = b.create_kernel(rc.t->info, "cudnn_graph");
  std::vector<uint8_t> data = tuned->plan_data();
  ASSERT_FALSE(data.empty()) << "no engine configuration recorded";
  EXPECT_EQ(cuda::conv_stats().tuned, s0.tuned + 1);
  ConvPlanData d;
  std::string why;
  ASSERT_TRUE(cuda::decode_conv_plan_data(data, 16, 1, &d, &why)) << why;
  EXPECT_EQ(d.layout, 2);
  EXPECT_EQ(d.input, rc.t->info.inputs[0].opt);
  std::printf("cudnn_graph: tuned engine configuration rank %lld\n", static_cast<long long>(d.algo));

  rc.t->info.tune = false;
  rc.t->info.plan_data = &data;
  std::unique_ptr<Kernel> stored = b.create_kernel(rc.t->info, "cudnn_graph");
  EXPECT_EQ(cuda::conv_stats().stored, s0.stored + 1);
  EXPECT_EQ(stored->plan_data(), data);
  HostTensor a = run_kernel(*tuned, rc.views, rc.in, rc.out),
             c = run_kernel(*stored, rc.views, rc.in, rc.out);
  EXPECT_TRUE(same_bytes(a, c)) << "the stored engine computes other bits than the tuned one";

  // Foreign (other opt dims, the legacy kernels' layout) and corrupt data: the heuristic's first.
  ConvPlanData other = d, legacy = d;
  other.input[0] += 1;
  legacy.layout = 1;
  std::vector<uint8_t> foreign = cuda::encode_conv_plan_data(other),
                       nhwc = cuda::encode_conv_plan_data(legacy), corrupt = data;
  corrupt[0] ^= 0xff;
  for (const auto* bad : {&foreign, &nhwc, &corrupt}) {
    rc.t->info.plan_data = bad;
    std::unique_ptr<Kernel> k = b.create_kernel(rc.t->info, "cudnn_graph");
    EXPECT_TRUE(k->plan_data().empty());
    expect_near_scaled(from_format(run_kernel(*k, rc.views, rc.in, rc.out), TensorFormat::ChannelsLast),
                       from_format(a, TensorFormat::ChannelsLast), 1e-2, "heuristic vs tuned");
  }
  EXPECT_EQ(cuda::conv_stats().rejected, s0.rejected + 3);
}

// Two convolutions of one signature in a timed build: the second takes the first's choice (reused within the
// build) and its kernel starts from the engine configuration or algorithm the first one tuned, as a loaded
// plan's would, instead of tuning again (each cuDNN runtime-fusion configuration tried is a compile): the
// build tunes exactly as many kernels as the build of the first convolution alone. Both compute what the cpu
// backend computes in fp32 (tolerance as above).
TEST(EngineCuda, ConvGraphALayerReusedWithinTheBuildStartsFromTheEarlierLayersEngine) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn_graph")) GTEST_SKIP() << "built without cuDNN";
  std::mt19937 rng(95);
  const HostTensor ka = random_tensor(DType::Float32, {32, 32, 3, 3}, rng, -0.2, 0.2),
                   kb = random_tensor(DType::Float32, {32, 32, 3, 3}, rng, -0.2, 0.2);
  auto define = [&](Network& net, bool both) {
    Tensor* x = net.add_input("x", DType::Float32, {2, 32, 14, 14});
    for (const std::string name : {"conv_a", "conv_b"}) {
      if (name == "conv_b" && !both) break;
      Tensor* y =
          net.add_convolution(name, x, Weights(name + "_w", name == "conv_a" ? ka : kb), Weights(), pad1());
      y->set_name(name + "_y");
      net.mark_output(y);
    }
  };
  BuilderConfig config;
  config.backend = "cuda";
  config.precisions = {Precision::FP32, Precision::FP16};
  config.timing_iterations = 1;
  config.timing_cache_path = "";
  auto tuned_by_build = [&](const Network& net, std::shared_ptr<Plan>* plan) {
    const int64_t before = cuda::conv_stats().tuned;
    *plan = build(net, config);
    return cuda::conv_stats().tuned - before;
  };
  Network one, two;
  define(one, false);
  define(two, true);
  std::shared_ptr<Plan> plan_one, plan;
  const int64_t tuned_one = tuned_by_build(one, &plan_one);
  const int64_t tuned_two = tuned_by_build(two, &plan);
  // The two-convolution build times no more contests than the one-convolution build (the convolution's, and
  // those of the format and type conversions around it): conv_b and its output's conversions reuse them.
  std::map<std::string, std::string> tactic;
  std::string layers;
  for (const PlanLayerInfo& l : plan->layers()) {
    tactic[l.name] = l.tactic;
    layers += " " + l.name + "=" + l.tactic;
  }
  EXPECT_GE(tactic_stats(*plan_one).timed, 1) << layers;
  EXPECT_EQ(tactic_stats(*plan).timed, tactic_stats(*plan_one).timed) << layers;
  EXPECT_GE(tactic_stats(*plan).reused, 1) << layers;
  EXPECT_EQ(tactic["conv_a"], tactic["conv_b"]);
  EXPECT_EQ(tuned_two, tuned_one) << "conv_b (" << tactic["conv_b"] << ") tuned again";
  const auto want_plan = build(two, BuilderConfig{});
  const HostTensor in = random_tensor(DType::Float32, {2, 32, 14, 14}, rng);
  const std::vector<HostTensor> got = run(plan, {{"x", in}}), want = run(want_plan, {{"x", in}});
  ASSERT_EQ(got.size(), 2u);
  for (size_t k = 0; k < 2; ++k) expect_near_scaled(got[k], want[k], 1e-2, "reused convolution vs cpu");
}

// The plan made at creation for the opt dims serves the first context that runs them: finalizing a
// runtime-fusion engine compiles a kernel (hundreds of milliseconds), which the build or the plan's loading
// pays, not the first call. Other dims, and a second context, make their own.
TEST(EngineCuda, ConvGraphPlansAreMadeOncePerThread) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn_graph")) GTEST_SKIP() << "built without cuDNN";
  const Backend& b = *shared_backend("cuda");
  std::mt19937 rng(94);
  ResidualConvCase rc(DType::Float16, TensorFormat::ChannelsLast, rng);
  const int64_t before = cuda::conv_stats().graph_plans;
  std::unique_ptr<Kernel> k = b.create_kernel(rc.t->info, "cudnn_graph");  // untimed: the heuristic's first
  EXPECT_EQ(cuda::conv_stats().graph_plans, before + 1);
  HostTensor first = run_kernel(*k, rc.views, rc.in, rc.out);  // a new state: takes the creation's plan
  EXPECT_EQ(cuda::conv_stats().graph_plans, before + 1);
  HostTensor second = run_kernel(*k, rc.views, rc.in, rc.out);  // another state on this thread: the same plan
  EXPECT_EQ(cuda::conv_stats().graph_plans, before + 1);
  EXPECT_TRUE(same_bytes(first, second));
  // Another thread has another cuDNN handle: a plan of its own, once, computing the same bits.
  HostTensor third, fourth;
  std::thread([&] {
    third = run_kernel(*k, rc.views, rc.in, rc.out);
    fourth = run_kernel(*k, rc.views, rc.in, rc.out);
  }).join();
  EXPECT_EQ(cuda::conv_stats().graph_plans, before + 2);
  EXPECT_TRUE(same_bytes(first, third));
  EXPECT_TRUE(same_bytes(first, fourth));
}

// A view at an element offset (2 bytes past a 256-byte aligned start) is refused with a clear error: plans
// declare 16-byte aligned pointers, and plans declaring element alignment gave wrong results (max error 8.85
// against outputs up to 8.15 on an H100, cuDNN 9.19).
TEST(EngineCuda, ConvGraphRefusesViewsAtElementOffsets) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn_graph")) GTEST_SKIP() << "built without cuDNN";
  const Backend& b = *shared_backend("cuda");
  std::mt19937 rng(95);
  ResidualConvCase rc(DType::Float16, TensorFormat::ChannelsLast, rng);
  std::unique_ptr<Kernel> k = b.create_kernel(rc.t->info, "cudnn_graph");
  try {
    run_kernel(*k, rc.views, rc.in, rc.out, 2);
    FAIL() << "expected an alignment error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(e.message().find("16-byte aligned"), std::string::npos) << e.message();
  }
  // The kernel still runs aligned buffers.
  HostTensor again = run_kernel(*k, rc.views, rc.in, rc.out);
  EXPECT_GT(again.nbytes(), 0u);
}

TEST(EngineCuda, ConvGraphFusedReluPropagatesNan) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn_graph")) GTEST_SKIP() << "built without cuDNN";
  std::mt19937 rng(92);
  HostTensor k = random_tensor(DType::Float32, {16, 8, 3, 3}, rng, -0.3, 0.3),
             bias = random_tensor(DType::Float32, {16}, rng);
  HostTensor x = random_tensor(DType::Float32, {1, 8, 6, 6}, rng);
  x.mutable_data_as<float>()[3 * 6 + 2] = std::numeric_limits<float>::quiet_NaN();  // channel 0, (3, 2)
  auto make = [&](Network& net) {
    Tensor* xt = net.add_input("x", DType::Float32, x.sizes());
    Tensor* y = net.add_convolution("conv", xt, Weights("w", k), Weights("b", bias), pad1());
    y = net.add_activation("relu", y, ActivationKind::Relu);
    y->set_name("y");
    net.mark_output(y);
  };
  Network cpu_net;
  make(cpu_net);
  HostTensor want = run(build(cpu_net, config_for("cpu", DType::Float32, false)), {{"x", x}})[0];
  // fp16 fuses the ReLU into the graph; bf16 runs it in the post-op pass (cuDNN's fused bf16 ReLU drops NaN).
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    Network net;
    make(net);
    auto plan = build(net, config_for("cuda", dt, false));
    for (const auto& l : plan->layers()) {
      if (l.kind == LayerKind::Convolution) {
        EXPECT_EQ(l.tactic, "cudnn_graph") << describe(plan->layers());
      }
    }
    HostTensor got = run(plan, {{"x", x}})[0];
    int nans = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      const bool want_nan = std::isnan(want.get_as_double(i));
      nans += want_nan;
      EXPECT_EQ(std::isnan(got.get_as_double(i)), want_nan) << "element " << i;
    }
    EXPECT_EQ(nans, 16 * 9);  // every output channel at the 3x3 positions whose window holds the NaN
  }
}

TEST(EngineCuda, ConvGraphDynamicBatchMakesAPlanPerShape) {
  KILN_REQUIRE_GPU();
  if (!row(LayerKind::Convolution, "cudnn_graph")) GTEST_SKIP() << "built without cuDNN";
  std::mt19937 rng(93);
  HostTensor k = random_tensor(DType::Float32, {32, 16, 3, 3}, rng, -0.3, 0.3),
             bias = random_tensor(DType::Float32, {32}, rng);
  auto make = [&](Network& net) {
    Tensor* xt = net.add_input("x", DType::Float32, {-1, 16, 12, 12});
    Tensor* y = net.add_convolution("conv", xt, Weights("w", k), Weights("b", bias), pad1());
    y = net.add_activation("relu", y, ActivationKind::Relu);
    y->set_name("y");
    net.mark_output(y);
  };
  OptimizationProfile prof;
  prof.set_dimensions("x", {1, 16, 12, 12}, {4, 16, 12, 12}, {8, 16, 12, 12});
  Network cpu_net, net;
  make(cpu_net);
  make(net);
  BuilderConfig cpu = config_for("cpu", DType::Float32, false),
                gpu = config_for("cuda", DType::Float16, true);
  cpu.profiles = gpu.profiles = {prof};
  auto cpu_plan = build(cpu_net, cpu), plan = build(net, gpu);
  for (const auto& l : plan->layers()) {
    if (l.kind == LayerKind::Convolution) {
      EXPECT_EQ(l.tactic, "cudnn_graph") << describe(plan->layers());
    }
  }
  for (int64_t n : {1, 4, 8, 3}) {
    HostTensor x = random_tensor(DType::Float32, {n, 16, 12, 12}, rng);
    expect_near_scaled(run(plan, {{"x", x}})[0], run(cpu_plan, {{"x", x}})[0], 1e-2,
                       "batch " + std::to_string(n));
  }
}

}  // namespace
}  // namespace kiln::engine

#endif
