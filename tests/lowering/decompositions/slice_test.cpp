#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// position_ids[:, :seq_len] (transformers' BERT): a static buffer sliced to a run-time length becomes an
// index_select with arange over the SymInt. A gather of the same elements: checked exactly (the default check runs
// both graphs through the libtorch reference at the symbol hints).
TEST(DecomposeSlice, SymbolicEndBecomesIndexSelectOfArange) {
  testing::expect_decomposition(R"(graph(%pos: f32[1, 16], %ids: i64[s0, s1]) {
  symbol s0 in [1, 8] hint 2
  symbol s1 in [2, 16] hint 5
  %n: sym_int(s1) = aten.sym_size.int(self=%ids, dim=1)
  %y: f32[1, s1 - 1] = aten.slice.Tensor(self=%pos, dim=1, start=1, end=%n, step=1)
  return (%y)
})",
                                R"(graph(%pos: f32[1, 16], %ids: i64[s0, s1]) {
  symbol s0 in [1, 8] hint 2
  symbol s1 in [2, 16] hint 5
  %n: sym_int(s1) = aten.sym_size.int(self=%ids, dim=1)
  %arange: i64[s1 - 1] = aten.arange.start_step(start=1, end=%n, step=1, *, dtype=dtype.i64, layout=None, device=None, pin_memory=None)
  %index_select: f32[1, s1 - 1] = aten.index_select.default(self=%pos, dim=1, index=%arange)
  return (%index_select)
})");
}

// Where the range allows an end beyond the dim (Python clamps) or an empty slice, the node stays as it is.
TEST(DecomposeSlice, ClampingOrEmptyRangesAreLeftAlone) {
  const char* beyond = R"(graph(%pos: f32[1, 16], %ids: i64[s0, s1]) {
  symbol s0 in [1, 8] hint 2
  symbol s1 in [1, 20] hint 5
  %n: sym_int(s1) = aten.sym_size.int(self=%ids, dim=1)
  %y: f32[1, s1] = aten.slice.Tensor(self=%pos, dim=1, start=0, end=%n, step=1)
  return (%y)
})";
  testing::expect_decomposition(beyond, beyond);
  const char* empty = R"(graph(%pos: f32[1, 16], %ids: i64[s0, s1]) {
  symbol s0 in [1, 8] hint 2
  symbol s1 in [2, 16] hint 5
  %n: sym_int(s1) = aten.sym_size.int(self=%ids, dim=1)
  %y: f32[1, s1 - 2] = aten.slice.Tensor(self=%pos, dim=1, start=2, end=%n, step=1)
  return (%y)
})";
  testing::expect_decomposition(empty, empty);
}

// mask[:, :, :, :key_len] (transformers' sdpa attention, phi's 2 PyTorch nodes in the zoo): the end is the
// dim's own size, so the slice is the whole tensor and its users read the mask; the ranges alone (s1 up to 64
// on a dim of s1) do not prove end <= size, the difference does.
TEST(DecomposeSlice, EndEqualToTheSizeIsTheWholeTensor) {
  testing::expect_decomposition(R"(graph(%mask: f32[s0, 1, s1, s1], %ids: i64[s0, s1]) {
  symbol s0 in [1, 8] hint 2
  symbol s1 in [2, 64] hint 5
  %n: sym_int(s1) = aten.sym_size.int(self=%ids, dim=1)
  %y: f32[s0, 1, s1, s1] = aten.slice.Tensor(self=%mask, dim=3, start=0, end=%n, step=1)
  %z: f32[s0, 1, s1, s1] = aten.exp.default(self=%y)
  return (%z)
})",
                                R"(graph(%mask: f32[s0, 1, s1, s1], %ids: i64[s0, s1]) {
  symbol s0 in [1, 8] hint 2
  symbol s1 in [2, 64] hint 5
  %n: sym_int(s1) = aten.sym_size.int(self=%ids, dim=1)
  %z: f32[s0, 1, s1, s1] = aten.exp.default(self=%mask)
  return (%z)
})");
}

// An end provably <= the size by the difference of the expressions (s1 on a dim of s1 + 1), not by the
// ranges.
TEST(DecomposeSlice, EndBelowTheSizeByExpression) {
  testing::expect_decomposition(R"(graph(%x: f32[s1 + 1, 4], %ids: i64[s1]) {
  symbol s1 in [2, 64] hint 5
  %n: sym_int(s1) = aten.sym_size.int(self=%ids, dim=0)
  %y: f32[s1, 4] = aten.slice.Tensor(self=%x, dim=0, start=0, end=%n, step=1)
  return (%y)
})",
                                R"(graph(%x: f32[s1 + 1, 4], %ids: i64[s1]) {
  symbol s1 in [2, 64] hint 5
  %n: sym_int(s1) = aten.sym_size.int(self=%ids, dim=0)
  %arange: i64[s1] = aten.arange.start_step(start=0, end=%n, step=1, *, dtype=dtype.i64, layout=None, device=None, pin_memory=None)
  %index_select: f32[s1, 4] = aten.index_select.default(self=%x, dim=0, index=%arange)
  return (%index_select)
})");
}

}  // namespace
}  // namespace kiln::lowering
