// The oneDNN convolution tactics against the reference kernel.
//
// Tolerance: fp32 allclose(rtol=1e-4, atol=1e-5). oneDNN reassociates the K-long dot products (blocking,
// Winograd-free direct/GEMM kernels with FMA), so results differ from the reference's sequential sums by a
// few ulps of the partial sums; inputs and weights in [-1, 1) keep those sums O(1), well within the bound.

#include "engine/backends/cpu/kernels/kernel_test_util.h"

namespace kiln::engine::cpu::testing {
namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;

/// A convolution layer over `x` dims with kernel dims `w` (scaled so sums stay O(1)).
OneLayer conv_layer(const Dims& w_dims, ConvolutionParams p, bool bias, uint32_t seed) {
  OneLayer l;
  l.layer.name = "conv";
  l.layer.kind = LayerKind::Convolution;
  HostTensor w = random_tensor(w_dims, seed);
  l.layer.weights.push_back(Weights("w", w));
  int64_t out_c = p.transposed ? w_dims[1] * p.groups : w_dims[0];
  l.layer.weights.push_back(bias ? Weights("b", random_tensor({out_c}, seed + 1)) : Weights());
  l.layer.params = p;
  return l;
}

PostOp act(ActivationKind k, double alpha = 0, double beta = 0) {
  PostOp op;
  op.kind = PostOp::Activation;
  op.activation = ActivationParams{k, alpha, beta};
  return op;
}

PostOp residual(double scale = 1.0) {
  PostOp op;
  op.kind = PostOp::Sum;
  op.scale = scale;
  return op;
}

/// Checks both tactics; `x` run shapes (the first is also the build shape); residual inputs added when the
/// post-ops have a Sum.
void check(const OneLayer& l, const std::vector<Dims>& xs, const std::string& what) {
  int64_t sums = count_sum_post_ops(l.layer.get<ConvolutionParams>().post_ops);
  std::vector<std::vector<Dims>> runs;
  OneLayer plain = l;  // shape inference without residual inputs
  plain.layer.get<ConvolutionParams>().post_ops.clear();
  for (const Dims& x : xs) {
    std::vector<Dims> in{x};
    Dims y = plain.output_dims({x});
    for (int64_t i = 0; i < sums; ++i) in.push_back(y);
    runs.push_back(in);
  }
  for (const char* name : {"onednn", "onednn_blocked"}) {
    check_against_reference(l, name, runs[0], runs, kRtol, kAtol, what);
  }
}

TEST(OnednnConvolution, Conv2dBasicWithBias) {
  ConvolutionParams p;
  p.pre_padding = {1, 1};
  p.post_padding = {1, 1};
  check(conv_layer({16, 8, 3, 3}, p, true, 1), {{1, 8, 12, 12}, {2, 8, 7, 9}}, "3x3 pad 1");
}

TEST(OnednnConvolution, Conv2dStrideDilationAsymmetricPadding) {
  ConvolutionParams p;
  p.stride = {2, 3};
  p.dilation = {2, 1};
  p.pre_padding = {2, 0};
  p.post_padding = {1, 2};
  check(conv_layer({5, 3, 3, 2}, p, true, 2), {{1, 3, 13, 11}, {3, 3, 9, 17}}, "stride/dilation/padding");
}

TEST(OnednnConvolution, Conv2dGroupsAndDepthwise) {
  ConvolutionParams p;
  p.groups = 4;
  p.pre_padding = {1, 1};
  p.post_padding = {1, 1};
  check(conv_layer({12, 2, 3, 3}, p, true, 3), {{1, 8, 10, 10}, {2, 8, 5, 6}}, "groups 4");
  ConvolutionParams d;
  d.groups = 16;
  d.stride = {2, 2};
  d.pre_padding = {1, 1};
  d.post_padding = {1, 1};
  check(conv_layer({16, 1, 3, 3}, d, false, 4), {{1, 16, 15, 15}}, "depthwise");
}

TEST(OnednnConvolution, Conv1dAndConv3d) {
  ConvolutionParams p1;
  p1.stride = {2};
  p1.pre_padding = {2};
  p1.post_padding = {1};
  check(conv_layer({6, 4, 5}, p1, true, 5), {{2, 4, 31}, {1, 4, 8}}, "conv1d");
  ConvolutionParams p3;
  p3.pre_padding = {1, 0, 1};
  p3.post_padding = {1, 1, 0};
  p3.groups = 2;
  check(conv_layer({4, 3, 3, 2, 3}, p3, true, 6), {{1, 6, 5, 6, 7}}, "conv3d groups 2");
}

TEST(OnednnConvolution, EachActivationPostOp) {
  struct Case {
    ActivationKind kind;
    double alpha, beta;
  };
  std::vector<Case> cases{{ActivationKind::Relu, 0, 0},       {ActivationKind::LeakyRelu, 0.1, 0},
                          {ActivationKind::Sigmoid, 0, 0},    {ActivationKind::Tanh, 0, 0},
                          {ActivationKind::GeluErf, 0, 0},    {ActivationKind::GeluTanh, 0, 0},
                          {ActivationKind::Silu, 0, 0},       {ActivationKind::HardSwish, 0, 0},
                          {ActivationKind::HardSigmoid, 0.2, 0.5}, {ActivationKind::Elu, 0.7, 0},
                          {ActivationKind::Selu, 0, 0},       {ActivationKind::Clip, -0.3, 0.4},
                          {ActivationKind::Mish, 0, 0}};
  for (const Case& c : cases) {
    ConvolutionParams p;
    p.pre_padding = {1, 1};
    p.post_padding = {1, 1};
    p.post_ops = {act(c.kind, c.alpha, c.beta)};
    check(conv_layer({8, 4, 3, 3}, p, true, 7), {{1, 4, 9, 9}}, activation_kind_name(c.kind));
  }
}

TEST(OnednnConvolution, ResidualSumThenRelu) {
  ConvolutionParams p;
  p.pre_padding = {1, 1};
  p.post_padding = {1, 1};
  p.post_ops = {residual(), act(ActivationKind::Relu)};
  check(conv_layer({16, 16, 3, 3}, p, true, 8), {{1, 16, 14, 14}, {2, 16, 5, 7}}, "bias + residual + relu");
  ConvolutionParams q;
  q.post_ops = {act(ActivationKind::Tanh), residual(0.5)};
  check(conv_layer({8, 8, 1, 1}, q, false, 9), {{1, 8, 6, 6}}, "tanh then 0.5 * residual");
}

TEST(OnednnConvolution, Deconvolution) {
  ConvolutionParams p;
  p.transposed = true;
  p.stride = {2, 2};
  p.pre_padding = {1, 1};
  p.post_padding = {1, 1};
  p.output_padding = {1, 1};
  check(conv_layer({8, 6, 3, 3}, p, true, 10), {{1, 8, 7, 7}, {2, 8, 4, 5}}, "deconv stride 2 output_padding 1");
  ConvolutionParams g;
  g.transposed = true;
  g.groups = 2;
  g.dilation = {2, 1};
  g.post_ops = {act(ActivationKind::Relu)};
  check(conv_layer({6, 4, 2, 3}, g, false, 11), {{1, 6, 5, 4}}, "deconv groups 2 dilation");
  ConvolutionParams d1;
  d1.transposed = true;
  d1.stride = {3};
  check(conv_layer({4, 5, 4}, d1, true, 12), {{2, 4, 9}}, "deconv1d");
}

TEST(OnednnConvolution, DoesNotApplyToUnsupportedPostOpsOrDtypes) {
  ConvolutionParams p;
  p.post_ops = {act(ActivationKind::Softsign)};
  OneLayer l = conv_layer({4, 4, 3, 3}, p, true, 13);
  EXPECT_FALSE(row(LayerKind::Convolution, "onednn").applies(l.info({{1, 4, 6, 6}})));
  ConvolutionParams q;
  OneLayer h = conv_layer({4, 4, 3, 3}, q, true, 14);
  LayerInfo info = h.info({{1, 4, 6, 6}});
  info.inputs[0].dtype = DType::Int32;
  EXPECT_FALSE(row(LayerKind::Convolution, "onednn").applies(info));
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
