// GELU's tanh approximation written out (GPT-2's gelu_new) becomes aten.gelu(approximate='tanh'), and the
// nodes of the formula go. torch's gelu computes the same formula in float (its own tanh and operation
// order): rtol 1e-5, atol 1e-6 on values of size ~1.

#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

TEST(FuseGeluTanh, GptTwoFormulaBecomesGelu) {
  auto pass = make_fuse_gelu_tanh_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 8]) {
  %mul_1: f32[2, 8] = aten.mul.Tensor(self=%x, other=0.5)
  %pow_1: f32[2, 8] = aten.pow.Tensor_Scalar(self=%x, exponent=3.0)
  %mul_2: f32[2, 8] = aten.mul.Tensor(self=%pow_1, other=0.044715)
  %add_6: f32[2, 8] = aten.add.Tensor(self=%x, other=%mul_2, *, alpha=1)
  %mul_3: f32[2, 8] = aten.mul.Tensor(self=%add_6, other=0.7978845608028654)
  %tanh: f32[2, 8] = aten.tanh.default(self=%mul_3)
  %add_7: f32[2, 8] = aten.add.Tensor(self=%tanh, other=1.0, *, alpha=1)
  %mul_4: f32[2, 8] = aten.mul.Tensor(self=%mul_1, other=%add_7)
  %y: f32[2, 8] = aten.relu.default(self=%mul_4)
  return (%y)
})",
                       R"(graph(%x: f32[2, 8]) {
  %gelu: f32[2, 8] = aten.gelu.default(self=%x, *, approximate="tanh")
  %y: f32[2, 8] = aten.relu.default(self=%gelu)
  return (%y)
})");
}

// The operands of the adds and the outer product in the other order, and a formula term that something else
// also reads (it stays, the rest goes). Same tolerance as above.
TEST(FuseGeluTanh, OperandOrderAndSharedTerms) {
  auto pass = make_fuse_gelu_tanh_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 8]) {
  %pow_1: f32[2, 8] = aten.pow.Tensor_Scalar(self=%x, exponent=3)
  %mul_2: f32[2, 8] = aten.mul.Tensor(self=%pow_1, other=0.044715)
  %add_6: f32[2, 8] = aten.add.Tensor(self=%mul_2, other=%x, *, alpha=1)
  %mul_3: f32[2, 8] = aten.mul.Tensor(self=%add_6, other=0.7978845608028654)
  %tanh: f32[2, 8] = aten.tanh.default(self=%mul_3)
  %add_7: f32[2, 8] = aten.add.Tensor(self=%tanh, other=1.0, *, alpha=1)
  %mul_1: f32[2, 8] = aten.mul.Tensor(self=%x, other=0.5)
  %mul_4: f32[2, 8] = aten.mul.Tensor(self=%add_7, other=%mul_1)
  return (%mul_4, %tanh)
})",
                       R"(graph(%x: f32[2, 8]) {
  %pow_1: f32[2, 8] = aten.pow.Tensor_Scalar(self=%x, exponent=3)
  %mul_2: f32[2, 8] = aten.mul.Tensor(self=%pow_1, other=0.044715)
  %add_6: f32[2, 8] = aten.add.Tensor(self=%mul_2, other=%x, *, alpha=1)
  %mul_3: f32[2, 8] = aten.mul.Tensor(self=%add_6, other=0.7978845608028654)
  %tanh: f32[2, 8] = aten.tanh.default(self=%mul_3)
  %gelu: f32[2, 8] = aten.gelu.default(self=%x, *, approximate="tanh")
  return (%gelu, %tanh)
})");
}

// Other constants, another variable in the cube, or a scaled add are other functions: nothing changes.
TEST(FuseGeluTanh, KeepsOtherFormulas) {
  auto pass = make_fuse_gelu_tanh_pass();
  const auto formula = [](const std::string& cube_term, const std::string& inner_add) {
    return R"(graph(%x: f32[2, 8], %z: f32[2, 8]) {
  %pow_1: f32[2, 8] = aten.pow.Tensor_Scalar(self=%x, exponent=3.0)
  %c: f32[2, 8] = aten.mul.Tensor()" +
           cube_term + R"()
  %a: f32[2, 8] = aten.add.Tensor(self=%x, other=%c, *, alpha=)" +
           inner_add + R"()
  %m: f32[2, 8] = aten.mul.Tensor(self=%a, other=0.7978845608028654)
  %t: f32[2, 8] = aten.tanh.default(self=%m)
  %one: f32[2, 8] = aten.add.Tensor(self=%t, other=1.0, *, alpha=1)
  %half: f32[2, 8] = aten.mul.Tensor(self=%x, other=0.5)
  %y: f32[2, 8] = aten.mul.Tensor(self=%half, other=%one)
  return (%y)
})";
  };
  for (const std::string& kept :
       {formula("self=%pow_1, other=0.05", "1"), formula("self=%z, other=0.044715", "1"),
        formula("self=%pow_1, other=0.044715", "2")}) {
    testing::expect_pass(*pass, kept, kept);
  }
  // The same text with the GPT-2 constants and alpha 1 is the formula: the template above is no other
  // function.
  EXPECT_TRUE(pass->run(*ir::parse_graph(formula("self=%pow_1, other=0.044715", "1")), PassContext{}));
}

}  // namespace
}  // namespace kiln::lowering
