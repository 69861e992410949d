#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// instance_norm -> group_norm(C groups): the same statistics; the kernels accumulate in different orders
// over 16 elements: rtol 1e-5, atol 1e-5.
TEST(DecomposeNormalization, InstanceNormBecomesGroupNorm) {
  testing::PassCheck check;
  check.atol = 1e-5;
  testing::expect_decomposition(R"(graph(%x: f32[2, 3, 4, 4]) {
  %w: f32[3] = parameter("norm.weight")
  %b: f32[3] = parameter("norm.bias")
  %y: f32[2, 3, 4, 4] = aten.instance_norm.default(input=%x, weight=%w, bias=%b, running_mean=None, running_var=None, use_input_stats=True, momentum=0.1, eps=1e-05, cudnn_enabled=False)
  return (%y)
})", R"(graph(%x: f32[2, 3, 4, 4]) {
  %w: f32[3] = parameter("norm.weight")
  %b: f32[3] = parameter("norm.bias")
  %group_norm: f32[2, 3, 4, 4] = aten.group_norm.default(input=%x, num_groups=3, weight=%w, bias=%b, eps=1e-05, cudnn_enabled=True)
  return (%group_norm)
})", check);
}

// Two-pass variance vs libtorch's Welford: fp32 rounding on O(1) values (rtol 1e-5, atol 1e-5).
TEST(DecomposeNormalization, VarStdVarMean) {
  testing::PassCheck check;
  check.atol = 1e-5;
  testing::expect_decomposition(R"(graph(%x: f32[3, 8]) {
  %v: f32[3] = aten.var.correction(self=%x, dim=[1], *, correction=1, keepdim=False)
  %s: f32[3, 1] = aten.std.dim(self=%x, dim=[-1], unbiased=False, keepdim=True)
  return (%v, %s)
})", R"(graph(%x: f32[3, 8]) {
  %mean: f32[3, 1] = aten.mean.dim(self=%x, dim=[1], keepdim=True, *, dtype=None)
  %sub: f32[3, 8] = aten.sub.Tensor(self=%x, other=%mean, *, alpha=1)
  %mul: f32[3, 8] = aten.mul.Tensor(self=%sub, other=%sub)
  %sum: f32[3] = aten.sum.dim_IntList(self=%mul, dim=[1], keepdim=False, *, dtype=None)
  %div: f32[3] = aten.div.Scalar(self=%sum, other=7.0)
  %mean_1: f32[3, 1] = aten.mean.dim(self=%x, dim=[1], keepdim=True, *, dtype=None)
  %sub_1: f32[3, 8] = aten.sub.Tensor(self=%x, other=%mean_1, *, alpha=1)
  %mul_1: f32[3, 8] = aten.mul.Tensor(self=%sub_1, other=%sub_1)
  %sum_1: f32[3, 1] = aten.sum.dim_IntList(self=%mul_1, dim=[1], keepdim=True, *, dtype=None)
  %div_1: f32[3, 1] = aten.div.Scalar(self=%sum_1, other=8.0)
  %sqrt: f32[3, 1] = aten.sqrt.default(self=%div_1)
  return (%div, %sqrt)
})", check);
}

}  // namespace
}  // namespace kiln::lowering
