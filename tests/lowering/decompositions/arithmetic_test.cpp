#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// Elementwise rewrites: fp32 rounding (rtol 1e-5, atol 1e-6); division by N(0,1) values can give large
// quotients, hence relative tolerance.
TEST(DecomposeArithmetic, AddcmulAddcdiv) {
  testing::expect_decomposition(R"(graph(%s: f32[2, 3], %a: f32[2, 3], %b: f32[3]) {
  %y: f32[2, 3] = aten.addcmul.default(self=%s, tensor1=%a, tensor2=%b, *, value=0.5)
  %z: f32[2, 3] = aten.addcdiv.default(self=%s, tensor1=%a, tensor2=%b, *, value=1)
  return (%y, %z)
})", R"(graph(%s: f32[2, 3], %a: f32[2, 3], %b: f32[3]) {
  %mul: f32[2, 3] = aten.mul.Tensor(self=%a, other=%b)
  %mul_1: f32[2, 3] = aten.mul.Scalar(self=%mul, other=0.5)
  %add: f32[2, 3] = aten.add.Tensor(self=%s, other=%mul_1, *, alpha=1)
  %div: f32[2, 3] = aten.div.Tensor(self=%a, other=%b)
  %add_1: f32[2, 3] = aten.add.Tensor(self=%s, other=%div, *, alpha=1)
  return (%add, %add_1)
})");
}

// bmm sums 4 products: rtol 1e-5, atol 1e-5.
TEST(DecomposeArithmetic, BaddbmmAddbmm) {
  testing::PassCheck check;
  check.atol = 1e-5;
  testing::expect_decomposition(R"(graph(%s: f32[2, 3, 5], %t: f32[3, 5], %a: f32[2, 3, 4], %b: f32[2, 4, 5]) {
  %y: f32[2, 3, 5] = aten.baddbmm.default(self=%s, batch1=%a, batch2=%b, *, beta=0.5, alpha=2)
  %z: f32[3, 5] = aten.addbmm.default(self=%t, batch1=%a, batch2=%b, *, beta=1, alpha=1)
  return (%y, %z)
})", R"(graph(%s: f32[2, 3, 5], %t: f32[3, 5], %a: f32[2, 3, 4], %b: f32[2, 4, 5]) {
  %bmm: f32[2, 3, 5] = aten.bmm.default(self=%a, mat2=%b)
  %mul: f32[2, 3, 5] = aten.mul.Scalar(self=%bmm, other=2.0)
  %mul_1: f32[2, 3, 5] = aten.mul.Scalar(self=%s, other=0.5)
  %add: f32[2, 3, 5] = aten.add.Tensor(self=%mul_1, other=%mul, *, alpha=1)
  %bmm_1: f32[2, 3, 5] = aten.bmm.default(self=%a, mat2=%b)
  %sum: f32[3, 5] = aten.sum.dim_IntList(self=%bmm_1, dim=[0], keepdim=False, *, dtype=None)
  %add_1: f32[3, 5] = aten.add.Tensor(self=%t, other=%sum, *, alpha=1)
  return (%add, %add_1)
})", check);
}

TEST(DecomposeArithmetic, RsubAndSquare) {
  testing::expect_decomposition(R"(graph(%x: f32[2, 3], %o: f32[2, 3]) {
  %y: f32[2, 3] = aten.rsub.Tensor(self=%x, other=%o, *, alpha=2)
  %z: f32[2, 3] = aten.rsub.Scalar(self=%x, other=1, alpha=1)
  %w: f32[2, 3] = aten.square.default(self=%x)
  return (%y, %z, %w)
})", R"(graph(%x: f32[2, 3], %o: f32[2, 3]) {
  %sub: f32[2, 3] = aten.sub.Tensor(self=%o, other=%x, *, alpha=2)
  %mul: f32[2, 3] = aten.mul.Scalar(self=%x, other=-1.0)
  %add: f32[2, 3] = aten.add.Scalar(self=%mul, other=1.0, alpha=1)
  %mul_1: f32[2, 3] = aten.mul.Tensor(self=%x, other=%x)
  return (%sub, %add, %mul_1)
})");
}

// fmod as a - trunc(a / b) * b: the same operations libtorch's fmod performs up to rounding of the quotient
// (rtol 1e-5, atol 1e-6 hold for the test's inputs, whose quotients are far from integers).
TEST(DecomposeArithmetic, FmodBecomesTruncatedDivision) {
  testing::expect_decomposition(R"(graph(%x: f32[2, 3], %y: f32[2, 3]) {
  %a: f32[2, 3] = aten.fmod.Scalar(self=%x, other=1.5)
  %b: f32[2, 3] = aten.fmod.Tensor(self=%x, other=%y)
  return (%a, %b)
})", R"(graph(%x: f32[2, 3], %y: f32[2, 3]) {
  %div: f32[2, 3] = aten.div.Scalar_mode(self=%x, other=1.5, *, rounding_mode="trunc")
  %mul: f32[2, 3] = aten.mul.Scalar(self=%div, other=1.5)
  %sub: f32[2, 3] = aten.sub.Tensor(self=%x, other=%mul, *, alpha=1)
  %div_1: f32[2, 3] = aten.div.Tensor_mode(self=%x, other=%y, *, rounding_mode="trunc")
  %mul_1: f32[2, 3] = aten.mul.Tensor(self=%div_1, other=%y)
  %sub_1: f32[2, 3] = aten.sub.Tensor(self=%x, other=%mul_1, *, alpha=1)
  return (%sub, %sub_1)
})");
}

// diff (transformers' mask construction): twice along the dynamic last dim after a prepend, and once along a
// static dim; exact in fp32 (differences of the same values), checked at the symbol hints.
TEST(DecomposeArithmetic, Diff) {
  testing::expect_decomposition(R"(graph(%x: f32[2, s0], %p: f32[2, 1]) {
  symbol s0 in [3, 16] hint 5
  %y: f32[2, s0 - 1] = aten.diff.default(self=%x, n=2, dim=-1, prepend=%p, append=None)
  %z: f32[1, s0] = aten.diff.default(self=%x, n=1, dim=0, prepend=None, append=None)
  return (%y, %z)
})",
                                R"(graph(%x: f32[2, s0], %p: f32[2, 1]) {
  symbol s0 in [3, 16] hint 5
  %cat: f32[2, s0 + 1] = aten.cat.default(tensors=[%p, %x], dim=1)
  %slice: f32[2, s0] = aten.slice.Tensor(self=%cat, dim=1, start=1, end=9223372036854775807, step=1)
  %slice_1: f32[2, s0] = aten.slice.Tensor(self=%cat, dim=1, start=0, end=-1, step=1)
  %sub: f32[2, s0] = aten.sub.Tensor(self=%slice, other=%slice_1, *, alpha=1)
  %slice_2: f32[2, s0 - 1] = aten.slice.Tensor(self=%sub, dim=1, start=1, end=9223372036854775807, step=1)
  %slice_3: f32[2, s0 - 1] = aten.slice.Tensor(self=%sub, dim=1, start=0, end=-1, step=1)
  %sub_1: f32[2, s0 - 1] = aten.sub.Tensor(self=%slice_2, other=%slice_3, *, alpha=1)
  %slice_4: f32[1, s0] = aten.slice.Tensor(self=%x, dim=0, start=1, end=9223372036854775807, step=1)
  %slice_5: f32[1, s0] = aten.slice.Tensor(self=%x, dim=0, start=0, end=-1, step=1)
  %sub_2: f32[1, s0] = aten.sub.Tensor(self=%slice_4, other=%slice_5, *, alpha=1)
  return (%sub_1, %sub_2)
})");
}

}  // namespace
}  // namespace kiln::lowering
