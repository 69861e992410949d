#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// Integer index arithmetic and a gather of the same elements: exact.
TEST(DecomposeIndex, SeveralIndexTensorsBecomeOneLinearIndex) {
  testing::expect_decomposition(R"(graph(%x: f32[5, 6, 3], %i: i64[2, 1], %j: i64[1, 4]) {
  %y: f32[2, 4, 3] = aten.index.Tensor(self=%x, indices=?[%i, %j])
  return (%y)
})", R"(graph(%x: f32[5, 6, 3], %i: i64[2, 1], %j: i64[1, 4]) {
  %remainder: i64[2, 1] = aten.remainder.Scalar(self=%i, other=5)
  %mul: i64[2, 1] = aten.mul.Scalar(self=%remainder, other=6)
  %remainder_1: i64[1, 4] = aten.remainder.Scalar(self=%j, other=6)
  %add: i64[2, 4] = aten.add.Tensor(self=%mul, other=%remainder_1, *, alpha=1)
  %reshape: f32[30, 3] = aten.reshape.default(self=%x, shape=[30, 3])
  %index: f32[2, 4, 3] = aten.index.Tensor(self=%reshape, indices=?[%add])
  return (%index)
})");
}

TEST(DecomposeIndex, SeparatedIndicesAndMasksAreLeftAlone) {
  const char* separated = R"(graph(%x: f32[5, 6, 7], %i: i64[2], %j: i64[2]) {
  %y: f32[2, 6] = aten.index.Tensor(self=%x, indices=?[%i, None, %j])
  return (%y)
})";
  testing::expect_decomposition(separated, separated);
}

}  // namespace
}  // namespace kiln::lowering
