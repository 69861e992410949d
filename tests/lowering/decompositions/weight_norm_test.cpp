#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// _weight_norm of graph inputs (not constants): v * (g / sqrt(sum(v * v) over every dim but `dim`)), fp32
// rounding (rtol 1e-5, atol 1e-6 of the default check); dim = -1 normalizes over all of v.
TEST(DecomposeWeightNorm, OfTensorsBecomesArithmetic) {
  testing::expect_decomposition(R"(graph(%v: f32[4, 2, 3], %g: f32[1, 1, 3], %h: f32[]) {
  %w: f32[4, 2, 3] = aten._weight_norm.default(v=%v, g=%g, dim=2)
  %u: f32[4, 2, 3] = aten._weight_norm.default(v=%v, g=%h, dim=-1)
  return (%w, %u)
})",
                                R"(graph(%v: f32[4, 2, 3], %g: f32[1, 1, 3], %h: f32[]) {
  %mul: f32[4, 2, 3] = aten.mul.Tensor(self=%v, other=%v)
  %sum: f32[1, 1, 3] = aten.sum.dim_IntList(self=%mul, dim=[0, 1], keepdim=True, *, dtype=None)
  %sqrt: f32[1, 1, 3] = aten.sqrt.default(self=%sum)
  %div: f32[1, 1, 3] = aten.div.Tensor(self=%g, other=%sqrt)
  %mul_1: f32[4, 2, 3] = aten.mul.Tensor(self=%v, other=%div)
  %mul_2: f32[4, 2, 3] = aten.mul.Tensor(self=%v, other=%v)
  %sum_1: f32[] = aten.sum.dim_IntList(self=%mul_2, dim=[0, 1, 2], keepdim=False, *, dtype=None)
  %sqrt_1: f32[] = aten.sqrt.default(self=%sum_1)
  %div_1: f32[] = aten.div.Tensor(self=%h, other=%sqrt_1)
  %mul_3: f32[4, 2, 3] = aten.mul.Tensor(self=%v, other=%div_1)
  return (%mul_1, %mul_3)
})");
}

// Of constants with data (parameters): folded on the host into one constant (and the norms, for the interface
// form); the values must match libtorch's _weight_norm (the default numeric check: rtol 1e-5, atol 1e-6).
TEST(DecomposeWeightNorm, OfWeightsFoldsIntoConstants) {
  testing::expect_decomposition(R"(graph(%x: f32[4, 2, 3]) {
  %v: f32[4, 2, 3] = constant("v", data=[0.5, -1.0, 2.0, 1.5, 0.25, -0.75, 1.0, 1.0, -2.0, 0.5, 3.0, 0.125, -1.25, 0.5, 0.75, 2.5, -0.5, 1.0, 0.25, 0.25, 1.5, -3.0, 2.0, 1.0])
  %g: f32[4, 1, 1] = constant("g", data=[1.5, -0.5, 2.0, 0.75])
  %w: f32[4, 2, 3] = aten._weight_norm.default(v=%v, g=%g, dim=0)
  %y: f32[4, 2, 3] = aten.mul.Tensor(self=%x, other=%w)
  return (%y)
})",
                                R"(graph(%x: f32[4, 2, 3]) {
  %w_folded: f32[4, 2, 3] = constant("w_folded", data=[0.2496151, -0.4992302, 0.9984604, 0.7488454, 0.1248076, -0.3744227, -0.1084652, -0.1084652, 0.2169305, -0.0542326, -0.3253957, -0.0135582, -0.6666667, 0.2666667, 0.4, 1.333333, -0.2666667, 0.5333333, 0.0455522, 0.0455522, 0.2733133, -0.5466266, 0.3644177, 0.1822089])
  %y: f32[4, 2, 3] = aten.mul.Tensor(self=%x, other=%w_folded)
  return (%y)
})");
}

}  // namespace
}  // namespace kiln::lowering
