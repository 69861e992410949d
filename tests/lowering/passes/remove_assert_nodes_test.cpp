#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

TEST(RemoveAssertNodes, RemovesAssertsAndKeepsTheRest) {
  auto pass = make_remove_assert_nodes_pass();
  testing::PassCheck check;
  // The assert ops are not executable by the reference executor in every libtorch, and the value computed
  // (relu) is untouched: the numerical check is the text comparison here.
  check.numeric = false;
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3]) {
  node a0: = aten._assert_tensor_metadata.default(a=%x, size=None, stride=None, dtype=dtype.f32, device=None, layout=None)
  %r: f32[2, 3] = aten.relu.default(self=%x)
  node a1: = aten.sym_constrain_range_for_size.default(size=sym(2), min=None, max=None)
  return (%r)
})", R"(graph(%x: f32[2, 3]) {
  %r: f32[2, 3] = aten.relu.default(self=%x)
  return (%r)
})", check);
}

}  // namespace
}  // namespace kiln::lowering
