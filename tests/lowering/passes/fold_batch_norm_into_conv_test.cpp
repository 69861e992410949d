#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Folding changes the fp32 rounding of the weights (scale computed in double, stored in fp32) and the
// convolution sums 27 products of O(1) values: outputs are O(10), so rtol 1e-5 with atol 1e-5.
TEST(FoldBatchNormIntoConv, FoldsInferenceBatchNorm) {
  auto pass = make_fold_batch_norm_into_conv_pass();
  testing::PassCheck check;
  check.atol = 1e-5;
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3, 8, 8]) {
  %w: f32[4, 3, 3, 3] = parameter("conv.weight")
  %cb: f32[4] = parameter("conv.bias")
  %g: f32[4] = parameter("bn.weight")
  %b: f32[4] = parameter("bn.bias")
  %mean: f32[4] = buffer("bn.running_mean")
  %var: f32[4] = buffer("bn.running_var")
  %c: f32[2, 4, 8, 8] = aten.convolution.default(input=%x, weight=%w, bias=%cb, stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  %n: f32[2, 4, 8, 8] = aten.batch_norm.default(input=%c, weight=%g, bias=%b, running_mean=%mean, running_var=%var, training=False, momentum=0.1, eps=1e-05, cudnn_enabled=True)
  %r: f32[2, 4, 8, 8] = aten.relu.default(self=%n)
  return (%r)
})", R"(graph(%x: f32[2, 3, 8, 8]) {
  %c_folded_weight: f32[4, 3, 3, 3] = constant("c_folded_weight")
  %c_folded_bias: f32[4] = constant("c_folded_bias")
  %c: f32[2, 4, 8, 8] = aten.convolution.default(input=%x, weight=%c_folded_weight, bias=%c_folded_bias, stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  %r: f32[2, 4, 8, 8] = aten.relu.default(self=%c)
  return (%r)
})", check);
}

TEST(FoldBatchNormIntoConv, FoldedValuesAreExact) {
  // One channel, 1x1 kernel: weight 2, bias 1, gamma 3, beta 0.5, mean 1, var 3 (eps 1): scale = 3 / 2.
  auto pass = make_fold_batch_norm_into_conv_pass();
  testing::PassCheck check;
  check.print.constant_values = true;
  testing::expect_pass(*pass, R"(graph(%x: f32[1, 1, 2, 2]) {
  %w: f32[1, 1, 1, 1] = parameter("conv.weight", data=[2.0])
  %cb: f32[1] = parameter("conv.bias", data=[1.0])
  %g: f32[1] = parameter("bn.weight", data=[3.0])
  %b: f32[1] = parameter("bn.bias", data=[0.5])
  %mean: f32[1] = buffer("bn.running_mean", data=[1.0])
  %var: f32[1] = buffer("bn.running_var", data=[3.0])
  %c: f32[1, 1, 2, 2] = aten.convolution.default(input=%x, weight=%w, bias=%cb, stride=[1, 1], padding=[0, 0], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  %n: f32[1, 1, 2, 2] = aten.batch_norm.default(input=%c, weight=%g, bias=%b, running_mean=%mean, running_var=%var, training=False, momentum=0.1, eps=1.0, cudnn_enabled=True)
  return (%n)
})", R"(graph(%x: f32[1, 1, 2, 2]) {
  %c_folded_weight: f32[1, 1, 1, 1] = constant("c_folded_weight", data=[3.0])
  %c_folded_bias: f32[1] = constant("c_folded_bias", data=[0.5])
  %c: f32[1, 1, 2, 2] = aten.convolution.default(input=%x, weight=%c_folded_weight, bias=%c_folded_bias, stride=[1, 1], padding=[0, 0], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  return (%c)
})", check);
}

}  // namespace
}  // namespace kiln::lowering
