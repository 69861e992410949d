#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Only unused nodes go: exact (rtol 1e-5, atol 1e-6).
TEST(RemoveNumUsersIs0Nodes, RemovesDeadChainsKeepsEffects) {
  auto pass = make_remove_num_users_is_0_nodes_pass();
  testing::PassCheck check;
  check.numeric = false;  // the before graph has an in-place op on a graph input, which stays by design
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3]) {
  %a: f32[2, 3] = aten.relu.default(self=%x)
  %b: f32[2, 3] = aten.sigmoid.default(self=%a)
  %c: f32[2, 3] = aten.tanh.default(self=%x)
  %d: f32[2, 3] = aten.add_.Tensor(self=%x, other=%x, *, alpha=1)
  return (%c)
})", R"(graph(%x: f32[2, 3]) {
  %c: f32[2, 3] = aten.tanh.default(self=%x)
  %d: f32[2, 3] = aten.add_.Tensor(self=%x, other=%x, *, alpha=1)
  return (%c)
})", check);
}

TEST(RemoveNumUsersIs0Nodes, RemovesUnusedPureNodes) {
  auto pass = make_remove_num_users_is_0_nodes_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3]) {
  %a: f32[2, 3] = aten.relu.default(self=%x)
  %c: f32[2, 3] = aten.tanh.default(self=%x)
  return (%c)
})", R"(graph(%x: f32[2, 3]) {
  %c: f32[2, 3] = aten.tanh.default(self=%x)
  return (%c)
})");
}

}  // namespace
}  // namespace kiln::lowering
