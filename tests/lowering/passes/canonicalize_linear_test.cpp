#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// addmm/mm with a transposed constant weight become linear. linear runs the same fp32 matrix product
// (libtorch may pick another kernel, so the summation order of the 6-term dot products can differ):
// rtol 1e-5, atol 1e-5 on O(1) values.
TEST(CanonicalizeLinear, AddmmAndMmWithTransposedWeight) {
  auto pass = make_canonicalize_linear_pass();
  testing::PassCheck check;
  check.atol = 1e-5;
  testing::expect_pass(*pass, R"(graph(%x: f32[4, 6]) {
  %w: f32[5, 6] = parameter("fc.weight")
  %b: f32[5] = parameter("fc.bias")
  %w2: f32[3, 5] = parameter("fc2.weight")
  %wt: f32[6, 5] = aten.permute.default(self=%w, dims=[1, 0])
  %y: f32[4, 5] = aten.addmm.default(self=%b, mat1=%x, mat2=%wt, *, beta=1, alpha=1)
  %w2t: f32[5, 3] = aten.permute.default(self=%w2, dims=[-1, -2])
  %z: f32[4, 3] = aten.mm.default(self=%y, mat2=%w2t)
  return (%z)
})", R"(graph(%x: f32[4, 6]) {
  %w: f32[5, 6] = parameter("fc.weight")
  %b: f32[5] = parameter("fc.bias")
  %w2: f32[3, 5] = parameter("fc2.weight")
  %linear: f32[4, 5] = aten.linear.default(input=%x, weight=%w, bias=%b)
  %linear_1: f32[4, 3] = aten.linear.default(input=%linear, weight=%w2, bias=None)
  return (%linear_1)
})", check);
}

// Core ATen flattens a rank-3 input to a matrix around addmm; the linear takes the rank-3 input directly.
// Same tolerance and reason as above.
TEST(CanonicalizeLinear, RemovesTheFlatteningReshapes) {
  auto pass = make_canonicalize_linear_pass();
  testing::PassCheck check;
  check.atol = 1e-5;
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3, 4]) {
  %w: f32[5, 4] = parameter("fc.weight")
  %b: f32[5] = parameter("fc.bias")
  %wt: f32[4, 5] = aten.permute.default(self=%w, dims=[1, 0])
  %v: f32[6, 4] = aten.view.default(self=%x, size=[6, 4])
  %y: f32[6, 5] = aten.addmm.default(self=%b, mat1=%v, mat2=%wt, *, beta=1, alpha=1)
  %o: f32[2, 3, 5] = aten.view.default(self=%y, size=[2, 3, 5])
  %r: f32[2, 3, 5] = aten.relu.default(self=%o)
  return (%r)
})", R"(graph(%x: f32[2, 3, 4]) {
  %w: f32[5, 4] = parameter("fc.weight")
  %b: f32[5] = parameter("fc.bias")
  %linear: f32[2, 3, 5] = aten.linear.default(input=%x, weight=%w, bias=%b)
  %r: f32[2, 3, 5] = aten.relu.default(self=%linear)
  return (%r)
})", check);
}

// GPT-2's Conv1D: addmm with the constant weight used as it is ([K, N]) becomes a matrix product and a bias add
// on the rank-3 input, so the activation that follows reads the product directly; mm the same without the
// add. Same tolerance and reason as above.
TEST(CanonicalizeLinear, UntransposedConstantWeightBecomesMatmulAndBias) {
  auto pass = make_canonicalize_linear_pass();
  testing::PassCheck check;
  check.atol = 1e-5;
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3, 4]) {
  %w: f32[4, 5] = parameter("c_fc.weight")
  %b: f32[5] = parameter("c_fc.bias")
  %w2: f32[5, 6] = parameter("c_proj.weight")
  %v: f32[6, 4] = aten.view.default(self=%x, size=[6, 4])
  %y: f32[6, 5] = aten.addmm.default(self=%b, mat1=%v, mat2=%w, *, beta=1, alpha=1)
  %o: f32[2, 3, 5] = aten.view.default(self=%y, size=[2, 3, 5])
  %r: f32[2, 3, 5] = aten.tanh.default(self=%o)
  %v2: f32[6, 5] = aten.view.default(self=%r, size=[6, 5])
  %z: f32[6, 6] = aten.mm.default(self=%v2, mat2=%w2)
  return (%z)
})", R"(graph(%x: f32[2, 3, 4]) {
  %w: f32[4, 5] = parameter("c_fc.weight")
  %b: f32[5] = parameter("c_fc.bias")
  %w2: f32[5, 6] = parameter("c_proj.weight")
  %matmul: f32[2, 3, 5] = aten.matmul.default(self=%x, other=%w)
  %add: f32[2, 3, 5] = aten.add.Tensor(self=%matmul, other=%b, *, alpha=1)
  %r: f32[2, 3, 5] = aten.tanh.default(self=%add)
  %v2: f32[6, 5] = aten.view.default(self=%r, size=[6, 5])
  %matmul_1: f32[6, 6] = aten.matmul.default(self=%v2, other=%w2)
  return (%matmul_1)
})", check);
}

// The same with a dynamic batch: the reshapes carry SymInts. Same tolerance and reason as above.
TEST(CanonicalizeLinear, RemovesDynamicFlatteningReshapes) {
  auto pass = make_canonicalize_linear_pass();
  testing::PassCheck check;
  check.atol = 1e-5;
  testing::expect_pass(*pass, R"(graph(%x: f32[s0, 3, 4]) {
  symbol s0 in [1, 16] hint 5
  %w: f32[5, 4] = parameter("fc.weight")
  %b: f32[5] = parameter("fc.bias")
  %n: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)
  %wt: f32[4, 5] = aten.permute.default(self=%w, dims=[1, 0])
  %v: f32[3*s0, 4] = aten.view.default(self=%x, size=[-1, 4])
  %y: f32[3*s0, 5] = aten.addmm.default(self=%b, mat1=%v, mat2=%wt, *, beta=1, alpha=1)
  %o: f32[s0, 3, 5] = aten.view.default(self=%y, size=[%n, 3, 5])
  return (%o)
})", R"(graph(%x: f32[s0, 3, 4]) {
  symbol s0 in [1, 16] hint 5
  %w: f32[5, 4] = parameter("fc.weight")
  %b: f32[5] = parameter("fc.bias")
  %n: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)
  %linear: f32[s0, 3, 5] = aten.linear.default(input=%x, weight=%w, bias=%b)
  return (%linear)
})", check);
}

// A transposed activation, a scaled product, a bias of another shape than [N], and a flattened product that
// is read without being reshaped back are not linear layers (or not only): these stay or keep their reshapes.
// The kept reshape case is rewritten, so the numbers are checked: same tolerance and reason as above.
TEST(CanonicalizeLinear, KeepsWhatIsNotALinearLayer) {
  auto pass = make_canonicalize_linear_pass();
  testing::PassCheck check;
  check.atol = 1e-5;
  const std::string kept = R"(graph(%x: f32[4, 6], %a: f32[5, 6]) {
  %w: f32[5, 6] = parameter("fc.weight")
  %b: f32[5] = parameter("fc.bias")
  %c: f32[4, 5] = parameter("c")
  %at: f32[6, 5] = aten.permute.default(self=%a, dims=[1, 0])
  %y1: f32[4, 5] = aten.mm.default(self=%x, mat2=%at)
  %wt: f32[6, 5] = aten.permute.default(self=%w, dims=[1, 0])
  %y2: f32[4, 5] = aten.addmm.default(self=%b, mat1=%x, mat2=%wt, *, beta=2, alpha=1)
  %y3: f32[4, 5] = aten.addmm.default(self=%c, mat1=%x, mat2=%wt, *, beta=1, alpha=1)
  %s1: f32[4, 5] = aten.add.Tensor(self=%y1, other=%y2, *, alpha=1)
  %s2: f32[4, 5] = aten.add.Tensor(self=%s1, other=%y3, *, alpha=1)
  return (%s2)
})";
  testing::expect_pass(*pass, kept, kept, check);
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3, 4]) {
  %w: f32[5, 4] = parameter("fc.weight")
  %wt: f32[4, 5] = aten.permute.default(self=%w, dims=[1, 0])
  %v: f32[6, 4] = aten.reshape.default(self=%x, shape=[6, 4])
  %y: f32[6, 5] = aten.mm.default(self=%v, mat2=%wt)
  %s: f32[6, 5] = aten.sigmoid.default(self=%y)
  return (%s, %wt)
})", R"(graph(%x: f32[2, 3, 4]) {
  %w: f32[5, 4] = parameter("fc.weight")
  %wt: f32[4, 5] = aten.permute.default(self=%w, dims=[1, 0])
  %v: f32[6, 4] = aten.reshape.default(self=%x, shape=[6, 4])
  %linear: f32[6, 5] = aten.linear.default(input=%v, weight=%w, bias=None)
  %s: f32[6, 5] = aten.sigmoid.default(self=%linear)
  return (%s, %wt)
})", check);
}

}  // namespace
}  // namespace kiln::lowering
