// The oneDNN convolution's max-based ReLU (onednn/max_relu.h): which layers get it, when its bound holds, and
// that a convolution + ReLU whose input holds NaN, infinity or values too large for the bound runs the exact
// chain (NaN propagates as in torch.relu).
//
// Tolerance of the reference comparisons: fp32 allclose(rtol=1e-4, atol=1e-5), as onednn_convolution_test.cpp
// (oneDNN reassociates the sums); a NaN of the reference must be a NaN of the kernel, and the reverse.

#include <cmath>
#include <limits>

#include "engine/backends/cpu/kernels/kernel_test_util.h"
#include "engine/backends/cpu/onednn/max_relu.h"

namespace kiln::engine::cpu::testing {
namespace {

using onednn::MaxRelu;

PostOp relu_post_op() {
  PostOp op;
  op.kind = PostOp::Activation;
  op.activation.kind = ActivationKind::Relu;
  return op;
}

PostOp sum_post_op() {
  PostOp op;
  op.kind = PostOp::Sum;
  return op;
}

/// A 3x3 padded convolution of 8 -> 16 channels with bias and `post_ops`; weights `w_value` everywhere when set,
/// else random in [-1, 1).
OneLayer max_relu_conv(std::vector<PostOp> post_ops, std::optional<float> w_value = std::nullopt) {
  OneLayer l;
  l.layer.name = "conv";
  l.layer.kind = LayerKind::Convolution;
  const Dims w{16, 8, 3, 3};
  l.layer.weights.push_back(Weights(
      "w", w_value ? HostTensor::from_floats(std::vector<float>(16 * 8 * 9, *w_value), w) : random_tensor(w, 1)));
  l.layer.weights.push_back(Weights("b", random_tensor({16}, 2)));
  ConvolutionParams p;
  p.pre_padding = {1, 1};
  p.post_padding = {1, 1};
  p.post_ops = std::move(post_ops);
  l.layer.params = p;
  return l;
}

TEST(MaxRelu, OnlyForDirectForwardConvolutionsWithReluAndResidualPostOps) {
  EXPECT_TRUE(MaxRelu::for_convolution(max_relu_conv({relu_post_op()}).layer, false));
  EXPECT_TRUE(MaxRelu::for_convolution(max_relu_conv({sum_post_op(), relu_post_op()}).layer, false));
  EXPECT_FALSE(MaxRelu::for_convolution(max_relu_conv({}).layer, false));
  EXPECT_FALSE(MaxRelu::for_convolution(max_relu_conv({sum_post_op()}).layer, false));
  PostOp silu = relu_post_op();
  silu.activation.kind = ActivationKind::Silu;
  EXPECT_FALSE(MaxRelu::for_convolution(max_relu_conv({relu_post_op(), silu}).layer, false));
  EXPECT_FALSE(MaxRelu::for_convolution(max_relu_conv({relu_post_op()}).layer, true));  // Winograd
  OneLayer transposed = max_relu_conv({relu_post_op()});
  transposed.layer.get<ConvolutionParams>().transposed = true;
  EXPECT_FALSE(MaxRelu::for_convolution(transposed.layer, false));
}

TEST(MaxRelu, BoundHoldsOnlyForFiniteInputsFarBelowOverflow) {
  // Weights 1: each output sums 72 inputs, so the bound is 72 max|x| + max|bias| (+ max|residual|).
  std::optional<MaxRelu> m =
      MaxRelu::for_convolution(max_relu_conv({sum_post_op(), relu_post_op()}, 1.0f).layer, false);
  ASSERT_TRUE(m);
  const Dims d{1, 8, 4, 4};
  std::vector<float> x(128, 0.5f), r(256, -2.0f);
  TensorView xv{x.data(), DType::Float32, d}, rv{r.data(), DType::Float32, {1, 16, 4, 4}};
  EXPECT_TRUE(m->holds(xv, &rv, nullptr));
  x[77] = 1e35f;  // 7.2e36: still far below FLT_MAX / 8
  EXPECT_TRUE(m->holds(xv, &rv, nullptr));
  x[77] = 1e36f;  // 7.2e37 > FLT_MAX / 8
  EXPECT_FALSE(m->holds(xv, &rv, nullptr));
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
    x[77] = bad;
    EXPECT_FALSE(m->holds(xv, &rv, nullptr)) << bad;
    x[77] = 0.5f;
    r[200] = bad;
    EXPECT_FALSE(m->holds(xv, &rv, nullptr)) << "residual " << bad;
    r[200] = -2.0f;
  }
}

/// Runs `tactic` and the reference on `x` (and a residual of 0.25 when the post-ops have a Sum); NaN-aware.
void expect_like_reference(const OneLayer& l, const std::string& tactic, std::vector<float> x,
                           const std::string& what) {
  const Dims xd{1, 8, 6, 6}, yd{1, 16, 6, 6};
  std::vector<std::vector<float>> inputs{std::move(x)};
  std::vector<Dims> dims{xd};
  if (count_sum_post_ops(l.layer.get<ConvolutionParams>().post_ops) > 0) {
    inputs.push_back(std::vector<float>(16 * 36, 0.25f));
    dims.push_back(yd);
  }
  auto kernel = row(LayerKind::Convolution, tactic).create(l.info(dims));
  ThreadPool pool(1);
  auto state = kernel->create_state();
  std::vector<float> want = run_reference(l, inputs, dims), got = run(*kernel, state.get(), l, inputs, dims, &pool);
  ASSERT_EQ(got.size(), want.size());
  int nans = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      ++nans;
      EXPECT_TRUE(std::isnan(got[i])) << what << ": element " << i << " got " << got[i] << " want NaN";
    } else {
      EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-4 * std::fabs(want[i])) << what << ": element " << i;
    }
  }
  if (what.find("NaN") != std::string::npos) EXPECT_GT(nans, 0) << what << ": the case has no NaN output";
}

TEST(MaxRelu, ConvolutionReluRunsTheExactChainWhereTheBoundFails) {
  for (const std::vector<PostOp>& ops :
       {std::vector<PostOp>{relu_post_op()}, std::vector<PostOp>{sum_post_op(), relu_post_op()}}) {
    const OneLayer l = max_relu_conv(ops);
    const std::string chain = ops.size() == 1 ? "relu" : "residual + relu";
    for (const std::string tactic : {"onednn", "onednn_blocked"}) {
      std::vector<float> x = random_floats(8 * 36, 3);
      expect_like_reference(l, tactic, x, tactic + " " + chain + ", finite");
      x[100] = std::numeric_limits<float>::quiet_NaN();
      expect_like_reference(l, tactic, x, tactic + " " + chain + ", a NaN input");
      x[100] = 1e37f;  // finite, outputs up to ~1e37, above the bound (72 * 1e37 > FLT_MAX / 8)
      expect_like_reference(l, tactic, x, tactic + " " + chain + ", a huge finite input");
    }
  }
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
