// RMS normalization written out (transformers' LlamaRMSNorm) becomes aten.rms_norm, with the weight multiply
// after it, and the nodes of the formula go; other formulas stay. Values: the converter case
// Cases/NormalizationConverters.MatchesTorch/rms_norm* and the zoo's llama against torch.

#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

TEST(FuseRmsNorm, LlamaFormWithItsWeight) {
  auto pass = make_fuse_rms_norm_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 5, 8]) {
  %w: f32[8] = parameter("norm.weight")
  %pow_1: f32[2, 5, 8] = aten.pow.Tensor_Scalar(self=%x, exponent=2)
  %mean: f32[2, 5, 1] = aten.mean.dim(self=%pow_1, dim=[-1], keepdim=True, *, dtype=None)
  %add: f32[2, 5, 1] = aten.add.Tensor(self=%mean, other=1e-06, *, alpha=1)
  %rsqrt: f32[2, 5, 1] = aten.rsqrt.default(self=%add)
  %mul: f32[2, 5, 8] = aten.mul.Tensor(self=%x, other=%rsqrt)
  %mul_1: f32[2, 5, 8] = aten.mul.Tensor(self=%w, other=%mul)
  %y: f32[2, 5, 8] = aten.relu.default(self=%mul_1)
  return (%y)
})",
                       R"(graph(%x: f32[2, 5, 8]) {
  %w: f32[8] = parameter("norm.weight")
  %rms_norm: f32[2, 5, 8] = aten.rms_norm.default(input=%x, normalized_shape=[8], weight=%w, eps=1e-06)
  %y: f32[2, 5, 8] = aten.relu.default(self=%rms_norm)
  return (%y)
})");
}

// x * x for the square, rsqrt first in the outer product, two trailing dims (non-negative), a dynamic leading
// dim; the normalized value is also an output, so the weight multiply stays a multiply.
TEST(FuseRmsNorm, OtherSpellingsAndAWeightThatStays) {
  auto pass = make_fuse_rms_norm_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[s0, 4, 6]) {
  symbol s0 in [1, 8] hint 3
  %w: f32[4, 6] = parameter("norm.weight")
  %sq: f32[s0, 4, 6] = aten.mul.Tensor(self=%x, other=%x)
  %mean: f32[s0, 1, 1] = aten.mean.dim(self=%sq, dim=[1, 2], keepdim=True, *, dtype=None)
  %add: f32[s0, 1, 1] = aten.add.Tensor(self=%mean, other=1e-05)
  %rsqrt: f32[s0, 1, 1] = aten.rsqrt.default(self=%add)
  %mul: f32[s0, 4, 6] = aten.mul.Tensor(self=%rsqrt, other=%x)
  %mul_1: f32[s0, 4, 6] = aten.mul.Tensor(self=%mul, other=%w)
  return (%mul_1, %mul)
})",
                       R"(graph(%x: f32[s0, 4, 6]) {
  symbol s0 in [1, 8] hint 3
  %w: f32[4, 6] = parameter("norm.weight")
  %rms_norm: f32[s0, 4, 6] = aten.rms_norm.default(input=%x, normalized_shape=[4, 6], weight=None, eps=1e-05)
  %mul_1: f32[s0, 4, 6] = aten.mul.Tensor(self=%rms_norm, other=%w)
  return (%mul_1, %rms_norm)
})");
}

// Another exponent, no keepdim, a mean over a leading dim, a scaled add, a dynamic normalized dim, a square
// of another value: other functions (or shapes the rewrite cannot state), unchanged.
TEST(FuseRmsNorm, KeepsOtherFormulas) {
  auto pass = make_fuse_rms_norm_pass();
  struct Form {
    std::string x, square, mean_args, mean, alpha = "1";
  };
  const auto text = [](const Form& f) {
    return "graph(%x: " + f.x + ", %z: " + f.x + ") {\n  symbol s1 in [2, 16] hint 8\n  %sq: " + f.x + " = " +
           f.square + "\n  %mean: " + f.mean + " = aten.mean.dim(" + f.mean_args +
           ", *, dtype=None)\n  %add: " + f.mean +
           " = aten.add.Tensor(self=%mean, other=1e-06, *, alpha=" + f.alpha + ")\n  %rsqrt: " + f.mean +
           " = aten.rsqrt.default(self=%add)\n  %mul: " + f.x +
           " = aten.mul.Tensor(self=%x, other=%rsqrt)\n  return (%mul)\n}\n";
  };
  const std::string pow2 = "aten.pow.Tensor_Scalar(self=%x, exponent=2)",
                    last = "self=%sq, dim=[-1], keepdim=True";
  for (const Form& f : std::vector<Form>{
           {"f32[2, 8]", "aten.pow.Tensor_Scalar(self=%x, exponent=3)", last, "f32[2, 1]"},
           {"f32[2, 2]", pow2, "self=%sq, dim=[-1], keepdim=False", "f32[2]"},
           {"f32[2, 8]", pow2, "self=%sq, dim=[0], keepdim=True", "f32[1, 8]"},
           {"f32[2, 8]", pow2, last, "f32[2, 1]", "2"},
           {"f32[2, s1]", pow2, last, "f32[2, 1]"},
           {"f32[2, 8]", "aten.mul.Tensor(self=%z, other=%z)", last, "f32[2, 1]"},
       }) {
    testing::expect_pass(*pass, text(f), text(f));
  }
}

// A node without outputs beside the formula (an assert), and the same formula in fp16, which squares in fp16
// (|x| >= 256 overflows) where the layer would not: only the fp32 one is rewritten.
TEST(FuseRmsNorm, NodesWithoutOutputsAndFp16FormulasAreLeftAlone) {
  auto pass = make_fuse_rms_norm_pass();
  testing::PassCheck check;
  check.numeric = false;  // (the assert is not executable by every libtorch; values: the tests above)
  const auto formula = [](const std::string& t, const std::string& prefix) {
    return "  %" + prefix + "sq: " + t + "[2, 8] = aten.mul.Tensor(self=%" + prefix + "x, other=%" + prefix +
           "x)\n  %" + prefix + "mean: " + t + "[2, 1] = aten.mean.dim(self=%" + prefix +
           "sq, dim=[1], keepdim=True, *, dtype=None)\n  %" + prefix + "add: " + t +
           "[2, 1] = aten.add.Tensor(self=%" + prefix + "mean, other=1e-06, *, alpha=1)\n  %" + prefix +
           "rsqrt: " + t + "[2, 1] = aten.rsqrt.default(self=%" + prefix + "add)\n  %" + prefix + "y: " + t +
           "[2, 8] = aten.mul.Tensor(self=%" + prefix + "x, other=%" + prefix + "rsqrt)\n";
  };
  const std::string assert_node =
      "  node a0: = aten._assert_tensor_metadata.default(a=%x, size=None, stride=None, dtype=dtype.f32, "
      "device=None, layout=None)\n";
  testing::expect_pass(*pass,
                       "graph(%x: f32[2, 8], %hx: f16[2, 8]) {\n" + assert_node + formula("f32", "") +
                           formula("f16", "h") + "  return (%y, %hy)\n}\n",
                       "graph(%x: f32[2, 8], %hx: f16[2, 8]) {\n" + assert_node +
                           "  %rms_norm: f32[2, 8] = aten.rms_norm.default(input=%x, normalized_shape=[8], "
                           "weight=None, eps=1e-06)\n" +
                           formula("f16", "h") + "  return (%rms_norm, %hy)\n}\n",
                       check);
}

// A multiply by a weight of another shape stays a multiply after the rms_norm.
TEST(FuseRmsNorm, AWeightOfAnotherShapeStaysAMultiply) {
  auto pass = make_fuse_rms_norm_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 8]) {
  %w: f32[2, 8] = parameter("norm.weight")
  %sq: f32[2, 8] = aten.pow.Tensor_Scalar(self=%x, exponent=2.0)
  %mean: f32[2, 1] = aten.mean.dim(self=%sq, dim=[1], keepdim=True, *, dtype=None)
  %add: f32[2, 1] = aten.add.Tensor(self=%mean, other=1e-06, *, alpha=1)
  %rsqrt: f32[2, 1] = aten.rsqrt.default(self=%add)
  %mul: f32[2, 8] = aten.mul.Tensor(self=%x, other=%rsqrt)
  %mul_1: f32[2, 8] = aten.mul.Tensor(self=%w, other=%mul)
  return (%mul_1)
})",
                       R"(graph(%x: f32[2, 8]) {
  %w: f32[2, 8] = parameter("norm.weight")
  %rms_norm: f32[2, 8] = aten.rms_norm.default(input=%x, normalized_shape=[8], weight=None, eps=1e-06)
  %mul_1: f32[2, 8] = aten.mul.Tensor(self=%w, other=%rms_norm)
  return (%mul_1)
})");
}

}  // namespace
}  // namespace kiln::lowering
