#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// conv2d -> convolution runs the same kernel; batch norm forms run the same inference formula. fp32
// accumulation order can differ between libtorch's entry points: rtol 1e-5, atol 1e-5.
TEST(CanonicalizeTrainingIr, ConvAndBatchNormForms) {
  auto pass = make_canonicalize_training_ir_pass();
  testing::PassCheck check;
  check.atol = 1e-5;
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3, 8, 8]) {
  %w: f32[4, 3, 3, 3] = parameter("conv.weight")
  %g: f32[4] = parameter("bn.weight")
  %b: f32[4] = parameter("bn.bias")
  %mean: f32[4] = buffer("bn.running_mean")
  %var: f32[4] = buffer("bn.running_var")
  %c: f32[2, 4, 8, 8] = aten.conv2d.default(input=%x, weight=%w, bias=None, stride=[1, 1], padding=[1, 1], dilation=[1, 1], groups=1)
  %n: f32[2, 4, 8, 8], %sm: f32[0], %sv: f32[0] = aten._native_batch_norm_legit_no_training.default(input=%c, weight=%g, bias=%b, running_mean=%mean, running_var=%var, momentum=0.1, eps=1e-05)
  %c2: f32[2, 4, 8, 8] = aten.conv2d.padding(input=%x, weight=%w, bias=None, stride=[1, 1], padding="same", dilation=[1, 1], groups=1)
  %r: f32[2, 4, 8, 8] = aten.add.Tensor(self=%n, other=%c2, *, alpha=1)
  return (%r)
})", R"(graph(%x: f32[2, 3, 8, 8]) {
  %w: f32[4, 3, 3, 3] = parameter("conv.weight")
  %g: f32[4] = parameter("bn.weight")
  %b: f32[4] = parameter("bn.bias")
  %mean: f32[4] = buffer("bn.running_mean")
  %var: f32[4] = buffer("bn.running_var")
  %convolution: f32[2, 4, 8, 8] = aten.convolution.default(input=%x, weight=%w, bias=None, stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  %batch_norm: f32[2, 4, 8, 8] = aten.batch_norm.default(input=%convolution, weight=%g, bias=%b, running_mean=%mean, running_var=%var, training=False, momentum=0.1, eps=1e-05, cudnn_enabled=True)
  %convolution_1: f32[2, 4, 8, 8] = aten.convolution.default(input=%x, weight=%w, bias=None, stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  %r: f32[2, 4, 8, 8] = aten.add.Tensor(self=%batch_norm, other=%convolution_1, *, alpha=1)
  return (%r)
})", check);
}

}  // namespace
}  // namespace kiln::lowering

namespace kiln::lowering {
namespace {

// Training-mode batch norm normalizes with batch statistics: rewriting it into inference batch norm gave max abs
// 1.99 vs torch. Both forms stay as they are, in inference too (they run in PyTorch).
TEST(CanonicalizeTrainingIr, KeepsTrainingModeBatchNorm) {
  auto pass = make_canonicalize_training_ir_pass();
  testing::PassCheck check;
  check.context.inference_mode = true;
  const std::string text = R"(graph(%x: f32[2, 4, 8, 8]) {
  %g: f32[4] = parameter("bn.weight")
  %b: f32[4] = parameter("bn.bias")
  %mean: f32[4] = buffer("bn.running_mean")
  %var: f32[4] = buffer("bn.running_var")
  %n: f32[2, 4, 8, 8] = aten.batch_norm.default(input=%x, weight=%g, bias=%b, running_mean=%mean, running_var=%var, training=True, momentum=0.1, eps=1e-05, cudnn_enabled=False)
  return (%n)
})";
  testing::expect_pass(*pass, text, text, check);
}

}  // namespace
}  // namespace kiln::lowering
