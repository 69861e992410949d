#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// Selection only: exact (rtol 1e-5, atol 1e-6).
TEST(DecomposeMasks, MaskedFill) {
  testing::expect_decomposition(R"(graph(%x: f32[2, 3], %m: bool[2, 3]) {
  %y: f32[2, 3] = aten.masked_fill.Scalar(self=%x, mask=%m, value=-1.5)
  return (%y)
})", R"(graph(%x: f32[2, 3], %m: bool[2, 3]) {
  %masked_fill_value: f32[] = constant("masked_fill_value")
  %where: f32[2, 3] = aten.where.self(condition=%m, self=%masked_fill_value, other=%x)
  return (%where)
})");
}

TEST(DecomposeMasks, TrilTriuUseAConstantMask) {
  testing::PassCheck check;
  check.print.constant_values = true;
  testing::expect_decomposition(R"(graph(%x: f32[2, 3]) {
  %y: f32[2, 3] = aten.tril.default(self=%x, diagonal=0)
  %z: f32[2, 3] = aten.triu.default(self=%x, diagonal=1)
  return (%y, %z)
})", R"(graph(%x: f32[2, 3]) {
  %tril_mask: bool[2, 3] = constant("tril_mask", data=[True, False, False, True, True, False])
  %tril_zero: f32[] = constant("tril_zero", data=[0.0])
  %triu_mask: bool[2, 3] = constant("triu_mask", data=[False, True, True, False, False, True])
  %triu_zero: f32[] = constant("triu_zero", data=[0.0])
  %where: f32[2, 3] = aten.where.self(condition=%tril_mask, self=%x, other=%tril_zero)
  %where_1: f32[2, 3] = aten.where.self(condition=%triu_mask, self=%x, other=%triu_zero)
  return (%where, %where_1)
})", check);
}

}  // namespace
}  // namespace kiln::lowering
