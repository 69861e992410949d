#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// Constant fills: exact (rtol 1e-5, atol 1e-6).
TEST(DecomposeFactories, LikeAndNewForms) {
  testing::expect_decomposition(R"(graph(%x: f32[s0, 3]) {
  symbol s0 in [1, 8] hint 2
  %a: f32[s0, 3] = aten.zeros_like.default(self=%x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None)
  %b: i64[s0, 3] = aten.full_like.default(self=%x, fill_value=7, *, dtype=dtype.i64, layout=None, device=None, pin_memory=None, memory_format=None)
  %c: f32[2, 2] = aten.new_ones.default(self=%x, size=[2, 2], *, dtype=None, layout=None, device=None, pin_memory=None)
  return (%a, %b, %c)
})", R"(graph(%x: f32[s0, 3]) {
  symbol s0 in [1, 8] hint 2
  %sym_size_int: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)
  %full: f32[s0, 3] = aten.full.default(size=[%sym_size_int, 3], fill_value=0, *, dtype=dtype.f32, layout=None, device=None, pin_memory=None)
  %full_1: i64[s0, 3] = aten.full.default(size=[%sym_size_int, 3], fill_value=7, *, dtype=dtype.i64, layout=None, device=None, pin_memory=None)
  %full_2: f32[2, 2] = aten.full.default(size=[2, 2], fill_value=1, *, dtype=dtype.f32, layout=None, device=None, pin_memory=None)
  return (%full, %full_1, %full_2)
})");
}

}  // namespace
}  // namespace kiln::lowering
