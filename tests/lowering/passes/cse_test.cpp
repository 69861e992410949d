#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// The merged nodes compute the same values: exact (rtol 1e-5, atol 1e-6).
TEST(Cse, MergesIdenticalPureNodes) {
  auto pass = make_cse_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3]) {
  %a: f32[2, 3] = aten.relu.default(self=%x)
  %b: f32[2, 3] = aten.relu.default(self=%x)
  %c: f32[2, 3] = aten.mul.Tensor(self=%a, other=%x)
  %d: f32[2, 3] = aten.mul.Tensor(self=%b, other=%x)
  %e: f32[2, 3] = aten.sigmoid.default(self=%x)
  %r: f32[2, 3] = aten.add.Tensor(self=%c, other=%d, *, alpha=1)
  return (%r, %e)
})", R"(graph(%x: f32[2, 3]) {
  %a: f32[2, 3] = aten.relu.default(self=%x)
  %c: f32[2, 3] = aten.mul.Tensor(self=%a, other=%x)
  %e: f32[2, 3] = aten.sigmoid.default(self=%x)
  %r: f32[2, 3] = aten.add.Tensor(self=%c, other=%c, *, alpha=1)
  return (%r, %e)
})");
}

TEST(Cse, KeepsRandomNodes) {
  auto pass = make_cse_pass();
  testing::PassCheck check;
  check.numeric = false;  // random outputs
  check.context.inference_mode = false;
  const std::string text = R"(graph(%x: f32[2, 3]) {
  %a: f32[2, 3] = aten.dropout.default(input=%x, p=0.5, train=True)
  %b: f32[2, 3] = aten.dropout.default(input=%x, p=0.5, train=True)
  return (%a, %b)
})";
  testing::expect_pass(*pass, text, text, check);
}

}  // namespace
}  // namespace kiln::lowering
