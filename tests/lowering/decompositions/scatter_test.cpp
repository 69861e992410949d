#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// Data movement only (slices, cat, full, expand): exact (rtol 1e-5, atol 1e-6).
TEST(DecomposeScatter, SliceAndSelectScatterBecomeCat) {
  testing::expect_decomposition(R"(graph(%x: f32[2, 6], %s: f32[2, 2], %r: f32[6]) {
  %a: f32[2, 6] = aten.slice_scatter.default(self=%x, src=%s, dim=1, start=1, end=3, step=1)
  %b: f32[2, 6] = aten.slice_scatter.default(self=%x, src=%s, dim=-1, start=-2, end=None, step=1)
  %c: f32[2, 6] = aten.select_scatter.default(self=%x, src=%r, dim=0, index=1)
  return (%a, %b, %c)
})", R"(graph(%x: f32[2, 6], %s: f32[2, 2], %r: f32[6]) {
  %slice: f32[2, 1] = aten.slice.Tensor(self=%x, dim=1, start=0, end=1, step=1)
  %slice_1: f32[2, 3] = aten.slice.Tensor(self=%x, dim=1, start=3, end=6, step=1)
  %cat: f32[2, 6] = aten.cat.default(tensors=[%slice, %s, %slice_1], dim=1)
  %slice_2: f32[2, 4] = aten.slice.Tensor(self=%x, dim=1, start=0, end=4, step=1)
  %cat_1: f32[2, 6] = aten.cat.default(tensors=[%slice_2, %s], dim=1)
  %unsqueeze: f32[1, 6] = aten.unsqueeze.default(self=%r, dim=0)
  %slice_3: f32[1, 6] = aten.slice.Tensor(self=%x, dim=0, start=0, end=1, step=1)
  %cat_2: f32[2, 6] = aten.cat.default(tensors=[%slice_3, %unsqueeze], dim=0)
  return (%cat, %cat_1, %cat_2)
})");
}

TEST(DecomposeScatter, FillBecomesFullOrExpand) {
  testing::expect_decomposition(R"(graph(%x: f32[s0, 3], %v: i64[]) {
  symbol s0 in [1, 8] hint 2
  %a: f32[s0, 3] = aten.fill.Scalar(self=%x, value=2.5)
  %b: f32[s0, 3] = aten.fill.Tensor(self=%x, value=%v)
  return (%a, %b)
})", R"(graph(%x: f32[s0, 3], %v: i64[]) {
  symbol s0 in [1, 8] hint 2
  %sym_size_int: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)
  %full: f32[s0, 3] = aten.full.default(size=[%sym_size_int, 3], fill_value=2.5, *, dtype=dtype.f32, layout=None, device=None, pin_memory=None)
  %_to_copy: f32[] = aten._to_copy.default(self=%v, *, dtype=dtype.f32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %expand: f32[s0, 3] = aten.expand.default(self=%_to_copy, size=[%sym_size_int, 3], *, implicit=False)
  return (%full, %expand)
})");
}

// copy(self, src) is src cast and broadcast to self: exact (integers to float).
TEST(DecomposeScatter, CopyBecomesCastAndExpand) {
  testing::expect_decomposition(R"(graph(%x: f32[2, 3], %y: i64[3]) {
  %c: f32[2, 3] = aten.copy.default(self=%x, src=%y, non_blocking=False)
  return (%c)
})", R"(graph(%x: f32[2, 3], %y: i64[3]) {
  %_to_copy: f32[3] = aten._to_copy.default(self=%y, *, dtype=dtype.f32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %expand: f32[2, 3] = aten.expand.default(self=%_to_copy, size=[2, 3], *, implicit=False)
  return (%expand)
})");
}

}  // namespace
}  // namespace kiln::lowering
