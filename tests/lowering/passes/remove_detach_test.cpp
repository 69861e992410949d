#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Pure data movement: the values must match exactly up to fp32 rounding (rtol 1e-5, atol 1e-6).
TEST(RemoveDetach, RemovesDetachAndAlias) {
  auto pass = make_remove_detach_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3]) {
  %d: f32[2, 3] = aten.detach.default(self=%x)
  %a: f32[2, 3] = aten.alias.default(self=%d)
  %r: f32[2, 3] = aten.relu.default(self=%a)
  return (%r)
})", R"(graph(%x: f32[2, 3]) {
  %r: f32[2, 3] = aten.relu.default(self=%x)
  return (%r)
})");
}

}  // namespace
}  // namespace kiln::lowering
