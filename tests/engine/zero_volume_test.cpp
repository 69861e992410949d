// Zero-size tensors (engine/core/zero_volume.h): legal in torch, never handed to oneDNN (whose primitive
// creation divides by them: SIGFPE before the fix). Layers with an empty output do nothing; layers with an
// empty input and a non-empty output (a matrix multiply over K = 0, a sum over an empty axis) give torch's
// values through the reference implementation. Exact comparisons: every expected value is 0 or a bias.

#include <gtest/gtest.h>

#include <random>

#include "engine_test_util.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {

using testing::build;
using testing::random_tensor;
using testing::run;

// x [rows, k] @ W [k, 4] + b, then ReLU: the oneDNN matmul path with fused bias and post-op.
Tensor* linear_relu(Network& net, Tensor* x, int64_t k, std::mt19937& rng, HostTensor* bias_out) {
  Tensor* w = net.add_constant("w", random_tensor(DType::Float32, {k, 4}, rng));
  Tensor* y = net.add_matrix_multiply("mm", x, false, w, false);
  HostTensor bias = random_tensor(DType::Float32, {1, 4}, rng);
  *bias_out = bias;
  y = net.add_elementwise("add", y, net.add_constant("b", bias), ElementwiseOp::Add);
  return net.add_activation("relu", y, ActivationKind::Relu);
}

TEST(EngineZeroVolume, StaticEmptyBatchBuildsAndRuns) {
  std::mt19937 rng(1);
  Network net;
  HostTensor bias;
  net.mark_output(linear_relu(net, net.add_input("x", DType::Float32, {0, 8}), 8, rng, &bias));
  auto plan = build(net);
  auto out = run(plan, {{"x", HostTensor(DType::Float32, {0, 8})}});
  ASSERT_EQ(out[0].sizes(), (Dims{0, 4}));
}

TEST(EngineZeroVolume, EmptyReductionAxisGivesBiasThroughReference) {
  std::mt19937 rng(2);
  Network net;
  HostTensor bias;
  // K = 0: the product is all zeros, so the output is relu(bias) broadcast over 3 rows.
  net.mark_output(linear_relu(net, net.add_input("x", DType::Float32, {3, 0}), 0, rng, &bias));
  auto plan = build(net);
  auto out = run(plan, {{"x", HostTensor(DType::Float32, {3, 0})}});
  ASSERT_EQ(out[0].sizes(), (Dims{3, 4}));
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 4; ++c) {
      EXPECT_EQ(out[0].get_as_double(r * 4 + c), std::max(0.0, bias.get_as_double(c))) << r << "," << c;
    }
  }
}

TEST(EngineZeroVolume, DynamicBatchWithEmptyOptShape) {
  std::mt19937 rng(3);
  Network net;
  HostTensor bias;
  Tensor* x = net.add_input("x", DType::Float32, {-1, 8});
  net.mark_output(linear_relu(net, x, 8, rng, &bias));
  Tensor* s = net.add_reduce("sum", x, ReduceOp::Sum, {0}, false);  // a sum over the (possibly empty) batch
  net.mark_output(s);
  BuilderConfig config;
  OptimizationProfile profile;
  profile.set_dimensions("x", {0, 8}, {0, 8}, {5, 8});  // the opt shape is empty: kernels prepare for max
  config.profiles = {profile};
  auto plan = build(net, config);
  auto empty = run(plan, {{"x", HostTensor(DType::Float32, {0, 8})}});
  ASSERT_EQ(empty[0].sizes(), (Dims{0, 4}));
  ASSERT_EQ(empty[1].sizes(), (Dims{8}));
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(empty[1].get_as_double(i), 0.0);  // torch: sum over nothing is 0
  HostTensor in = random_tensor(DType::Float32, {5, 8}, rng);
  auto full = run(plan, {{"x", in}});
  ASSERT_EQ(full[0].sizes(), (Dims{5, 4}));
  for (int64_t i = 0; i < 8; ++i) {
    double want = 0;
    for (int64_t r = 0; r < 5; ++r) want += in.get_as_double(r * 8 + i);
    EXPECT_NEAR(full[1].get_as_double(i), want, 1e-5);  // float sum of 5 values in [-1, 1)
  }
}

TEST(EngineZeroVolume, ConvolutionWithEmptyBatch) {
  std::mt19937 rng(4);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {0, 3, 8, 8});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* y = net.add_convolution("conv", x, random_tensor(DType::Float32, {4, 3, 3, 3}, rng),
                                  random_tensor(DType::Float32, {4}, rng), p);
  PoolingParams pool;
  pool.kind = PoolingParams::Max;
  pool.window = {2, 2};
  pool.stride = {2, 2};
  net.mark_output(net.add_pooling("pool", y, pool));
  auto plan = build(net);
  auto out = run(plan, {{"x", HostTensor(DType::Float32, {0, 3, 8, 8})}});
  ASSERT_EQ(out[0].sizes(), (Dims{0, 4, 4, 4}));
}

}  // namespace
}  // namespace kiln::engine
