#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Same ops with equivalent arguments: exact (rtol 1e-5, atol 1e-6).
TEST(NormalizeDimsAndSlices, NegativeDimsAndBounds) {
  auto pass = make_normalize_dims_and_slices_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 6, 4]) {
  %s: f32[2, 3, 4] = aten.slice.Tensor(self=%x, dim=-2, start=-4, end=-1, step=1)
  %t: f32[2, 3, 4] = aten.slice.Tensor(self=%s, dim=1, start=None, end=100, step=1)
  %m: f32[2, 3] = aten.mean.dim(self=%t, dim=[-1], keepdim=False, *, dtype=None)
  %sel: f32[2] = aten.select.int(self=%m, dim=-1, index=-1)
  %sm: f32[2, 3, 4] = aten.softmax.int(self=%t, dim=-1, dtype=None)
  %u: f32[2, 1] = aten.unsqueeze.default(self=%sel, dim=-1)
  %r: f32[2, 3, 4] = aten.add.Tensor(self=%sm, other=%t, *, alpha=1)
  return (%r, %u)
})", R"(graph(%x: f32[2, 6, 4]) {
  %s: f32[2, 3, 4] = aten.slice.Tensor(self=%x, dim=1, start=2, end=5, step=1)
  %t: f32[2, 3, 4] = aten.slice.Tensor(self=%s, dim=1, start=0, end=3, step=1)
  %m: f32[2, 3] = aten.mean.dim(self=%t, dim=[2], keepdim=False, *, dtype=None)
  %sel: f32[2] = aten.select.int(self=%m, dim=1, index=2)
  %sm: f32[2, 3, 4] = aten.softmax.int(self=%t, dim=2, dtype=None)
  %u: f32[2, 1] = aten.unsqueeze.default(self=%sel, dim=1)
  %r: f32[2, 3, 4] = aten.add.Tensor(self=%sm, other=%t, *, alpha=1)
  return (%r, %u)
})");
}

}  // namespace
}  // namespace kiln::lowering
