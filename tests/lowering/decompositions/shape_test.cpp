#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// Data movement only: exact (rtol 1e-5, atol 1e-6).
TEST(DecomposeShape, TransposeTNumpyT) {
  testing::expect_decomposition(R"(graph(%x: f32[2, 3, 4], %m: f32[2, 5]) {
  %a: f32[4, 3, 2] = aten.transpose.int(self=%x, dim0=0, dim1=-1)
  %b: f32[5, 2] = aten.t.default(self=%m)
  %c: f32[4, 3, 2] = aten.numpy_T.default(self=%x)
  return (%a, %b, %c)
})", R"(graph(%x: f32[2, 3, 4], %m: f32[2, 5]) {
  %permute: f32[4, 3, 2] = aten.permute.default(self=%x, dims=[2, 1, 0])
  %permute_1: f32[5, 2] = aten.permute.default(self=%m, dims=[1, 0])
  %permute_2: f32[4, 3, 2] = aten.permute.default(self=%x, dims=[2, 1, 0])
  return (%permute, %permute_1, %permute_2)
})");
}

TEST(DecomposeShape, StackUnbindSplitChunk) {
  testing::expect_decomposition(R"(graph(%x: f32[2, 3], %y: f32[2, 3]) {
  %s: f32[2, 2, 3] = aten.stack.default(tensors=[%x, %y], dim=1)
  %u0: f32[3], %u1: f32[3] = aten.unbind.int(self=%x, dim=0)
  %p0: f32[2, 2], %p1: f32[2, 1] = aten.split.Tensor(self=%y, split_size=2, dim=-1)
  %c0: f32[1, 3], %c1: f32[1, 3] = aten.chunk.default(self=%y, chunks=2, dim=0)
  return (%s, %u1, %p0, %p1, %c0)
})", R"(graph(%x: f32[2, 3], %y: f32[2, 3]) {
  %unsqueeze: f32[2, 1, 3] = aten.unsqueeze.default(self=%x, dim=1)
  %unsqueeze_1: f32[2, 1, 3] = aten.unsqueeze.default(self=%y, dim=1)
  %cat: f32[2, 2, 3] = aten.cat.default(tensors=[%unsqueeze, %unsqueeze_1], dim=1)
  %select: f32[3] = aten.select.int(self=%x, dim=0, index=1)
  %slice: f32[2, 2] = aten.slice.Tensor(self=%y, dim=1, start=0, end=2, step=1)
  %slice_1: f32[2, 1] = aten.slice.Tensor(self=%y, dim=1, start=2, end=3, step=1)
  %slice_2: f32[1, 3] = aten.slice.Tensor(self=%y, dim=0, start=0, end=1, step=1)
  return (%cat, %select, %slice, %slice_1, %slice_2)
})");
}

TEST(DecomposeShape, ExpandAsDynamic) {
  testing::expect_decomposition(R"(graph(%x: f32[1, 3], %o: f32[s0, 3]) {
  symbol s0 in [1, 8] hint 4
  %e: f32[s0, 3] = aten.expand_as.default(self=%x, other=%o)
  return (%e)
})", R"(graph(%x: f32[1, 3], %o: f32[s0, 3]) {
  symbol s0 in [1, 8] hint 4
  %sym_size_int: sym_int(s0) = aten.sym_size.int(self=%o, dim=0)
  %expand: f32[s0, 3] = aten.expand.default(self=%x, size=[%sym_size_int, 3], *, implicit=False)
  return (%expand)
})");
}

}  // namespace
}  // namespace kiln::lowering
