#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// Logical results (booleans): exact.
TEST(DecomposeLogicalReduce, AnyAndAllBecomeAmaxAndAminOfNonZero) {
  testing::expect_decomposition(R"(graph(%x: f32[2, 3]) {
  %a: bool[2] = aten.any.dim(self=%x, dim=1, keepdim=False)
  %b: bool[] = aten.all.default(self=%x)
  return (%a, %b)
})", R"(graph(%x: f32[2, 3]) {
  %ne: bool[2, 3] = aten.ne.Scalar(self=%x, other=0)
  %_to_copy: f32[2, 3] = aten._to_copy.default(self=%ne, *, dtype=dtype.f32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %amax: f32[2] = aten.amax.default(self=%_to_copy, dim=[1], keepdim=False)
  %ne_1: bool[2] = aten.ne.Scalar(self=%amax, other=0)
  %ne_2: bool[2, 3] = aten.ne.Scalar(self=%x, other=0)
  %_to_copy_1: f32[2, 3] = aten._to_copy.default(self=%ne_2, *, dtype=dtype.f32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %amin: f32[] = aten.amin.default(self=%_to_copy_1, dim=[0, 1], keepdim=False)
  %ne_3: bool[] = aten.ne.Scalar(self=%amin, other=0)
  return (%ne_1, %ne_3)
})");
}

}  // namespace
}  // namespace kiln::lowering
