#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Casts only: f32 -> f16 is exact for the same rounding on both sides, so rtol 1e-5 / atol 1e-6 hold.
TEST(CanonicalizeToCopy, RewritesToFormsIntoToCopyOrRemovesThem) {
  auto pass = make_canonicalize_to_copy_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3]) {
  %a: f16[2, 3] = aten.to.dtype(self=%x, dtype=dtype.f16, non_blocking=False, copy=False, memory_format=None)
  %b: f32[2, 3] = aten.to.dtype_layout(self=%x, *, dtype=dtype.f32, layout=layout.strided, device=device("cpu"), pin_memory=None, non_blocking=False, copy=False, memory_format=None)
  %c: f32[2, 3] = aten.to.other(self=%a, other=%b, non_blocking=False, copy=False, memory_format=None)
  %r: f32[2, 3] = aten.add.Tensor(self=%b, other=%c, *, alpha=1)
  return (%r)
})", R"(graph(%x: f32[2, 3]) {
  %_to_copy: f16[2, 3] = aten._to_copy.default(self=%x, *, dtype=dtype.f16, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %_to_copy_1: f32[2, 3] = aten._to_copy.default(self=%_to_copy, *, dtype=dtype.f32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %r: f32[2, 3] = aten.add.Tensor(self=%x, other=%_to_copy_1, *, alpha=1)
  return (%r)
})");
}

}  // namespace
}  // namespace kiln::lowering
