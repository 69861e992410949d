#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// A clone returns the same values: exact (rtol 1e-5, atol 1e-6).
TEST(RepairInputAsOutput, InsertsClone) {
  auto pass = make_repair_input_as_output_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3]) {
  %r: f32[2, 3] = aten.relu.default(self=%x)
  return (%r, %x)
})", R"(graph(%x: f32[2, 3]) {
  %x_clone: f32[2, 3] = aten.clone.default(self=%x, *, memory_format=None)
  %r: f32[2, 3] = aten.relu.default(self=%x)
  return (%r, %x_clone)
})");
}

}  // namespace
}  // namespace kiln::lowering
