// The CUDA backend beyond single layers: creation without a GPU, fused linear / convolution blocks against
// the CPU backend, plan round trip and the architecture check. Every test skips (saying why) where no GPU
// is available. Tolerance vs the CPU backend: rtol = atol = 1e-4 (both fp32 without TF32; accumulation
// order differs).

#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

TEST(EngineCuda, CreatingWithoutGpuIsAClearError) {
  std::string why;
  const Backend* b = shared_backend("cuda", &why);
  if (b) {
    EXPECT_EQ(b->device().rfind("cuda sm_", 0), 0u) << b->device();
    EXPECT_FALSE(b->host_accessible());
    EXPECT_NE(b->graph_recorder(), nullptr);  // CUDA graphs
    EXPECT_THROW(b->check_plan_device("cuda sm_10 Some Other GPU"), kiln::Error);
    EXPECT_NO_THROW(b->check_plan_device(b->device()));
  } else {
    EXPECT_TRUE(why.find("cuda") != std::string::npos) << why;
  }
}

std::vector<double> as_doubles(const HostTensor& t) { return values(t); }

/// Builds `make` on cpu and cuda, runs both on `inputs`, compares output 0.
void compare_with_cpu(const std::function<void(Network&)>& make, const std::map<std::string, HostTensor>& inputs,
                      const std::string& what, std::vector<LayerKind> expect_kinds = {}) {
  Network a, b;
  make(a);
  make(b);
  auto cpu = build(a);
  BuilderConfig config;
  config.backend = "cuda";
  auto gpu = build(b, config);
  if (!expect_kinds.empty()) {
    // The fused layers; reformats around channels-last tactics (cudnn_nhwc) are not counted.
    auto layers = gpu->layers();
    std::erase_if(layers, [](const PlanLayerInfo& l) { return l.kind == LayerKind::Reformat; });
    ASSERT_EQ(layers.size(), expect_kinds.size()) << what;
    for (size_t i = 0; i < layers.size(); ++i) EXPECT_EQ(layers[i].kind, expect_kinds[i]) << what << " layer " << i;
  }
  auto want = run(cpu, inputs);
  auto got = run(gpu, inputs);
  expect_close(got[0], as_doubles(want[0]), 1e-4, 1e-4, what);
  // The plan survives serialization and runs the same after loading.
  auto loaded = Plan::deserialize(gpu->serialize());
  expect_close(run(loaded, inputs)[0], as_doubles(want[0]), 1e-4, 1e-4, what + " (loaded plan)");
}

TEST(EngineCuda, FusedLinearBiasActivationResidual) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(61);
  HostTensor w1 = random_tensor(DType::Float32, {8, 16}, rng), b1 = random_tensor(DType::Float32, {16}, rng);
  HostTensor w2 = random_tensor(DType::Float32, {16, 8}, rng), b2 = random_tensor(DType::Float32, {8}, rng);
  for (ActivationKind act : {ActivationKind::Relu, ActivationKind::GeluTanh, ActivationKind::GeluErf}) {
    compare_with_cpu(
        [&](Network& net) {
          Tensor* x = net.add_input("x", DType::Float32, {2, 5, 8});
          Tensor* h = net.add_matrix_multiply("fc1", x, false, net.add_constant("w1", w1), false);
          h = net.add_elementwise("b1", h, net.add_constant("c1", b1), ElementwiseOp::Add);
          h = net.add_activation("act", h, act);
          h = net.add_matrix_multiply("fc2", h, false, net.add_constant("w2", w2), false);
          h = net.add_elementwise("b2", h, net.add_constant("c2", b2), ElementwiseOp::Add);
          h = net.add_elementwise("res", h, x, ElementwiseOp::Add);
          net.mark_output(h);
        },
        {{"x", random_tensor(DType::Float32, {2, 5, 8}, rng)}}, std::string("mlp ") + activation_kind_name(act),
        {LayerKind::MatrixMultiply, LayerKind::MatrixMultiply});
  }
}

// SwiGLU (Llama's MLP): cuBLASLt has no SiLU epilogue, so silu(gate) would be a pass of its own over the gate
// projection; it stays a layer and joins the product with the up projection in one fused pointwise pass.
TEST(EngineCuda, SwigluActivationJoinsTheProductNotTheMatmul) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(62);
  HostTensor wg = random_tensor(DType::Float32, {8, 16}, rng),
             wu = random_tensor(DType::Float32, {8, 16}, rng);
  HostTensor wd = random_tensor(DType::Float32, {16, 8}, rng);
  compare_with_cpu(
      [&](Network& net) {
        Tensor* x = net.add_input("x", DType::Float32, {2, 5, 8});
        Tensor* g = net.add_matrix_multiply("gate", x, false, net.add_constant("wg", wg), false);
        g = net.add_activation("silu", g, ActivationKind::Silu);
        Tensor* u = net.add_matrix_multiply("up", x, false, net.add_constant("wu", wu), false);
        Tensor* h = net.add_elementwise("mul", g, u, ElementwiseOp::Mul);
        h = net.add_matrix_multiply("down", h, false, net.add_constant("wd", wd), false);
        net.mark_output(h);
      },
      {{"x", random_tensor(DType::Float32, {2, 5, 8}, rng)}}, "swiglu",
      {LayerKind::MatrixMultiply, LayerKind::MatrixMultiply, LayerKind::FusedPointwise,
       LayerKind::MatrixMultiply});
}

TEST(EngineCuda, FusedConvolutionBiasReluResidual) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(62);
  HostTensor w = random_tensor(DType::Float32, {4, 4, 3, 3}, rng), b = random_tensor(DType::Float32, {4, 1, 1}, rng);
  compare_with_cpu(
      [&](Network& net) {
        Tensor* x = net.add_input("x", DType::Float32, {2, 4, 6, 6});
        ConvolutionParams p;
        p.pre_padding = p.post_padding = {1, 1};
        Tensor* h = net.add_convolution("conv", x, w, Weights(), p);
        h = net.add_elementwise("bias", h, net.add_constant("b", b), ElementwiseOp::Add);
        h = net.add_elementwise("res", h, x, ElementwiseOp::Add);
        h = net.add_activation("relu", h, ActivationKind::Relu);
        net.mark_output(h);
      },
      {{"x", random_tensor(DType::Float32, {2, 4, 6, 6}, rng)}}, "conv block", {LayerKind::Convolution});
}

}  // namespace
}  // namespace kiln::engine
