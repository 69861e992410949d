#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// dropout(train=False) is the identity: outputs match to fp32 rounding (rtol 1e-5, atol 1e-6).
TEST(RemoveDropout, RemovesInferenceDropout) {
  auto pass = make_remove_dropout_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[4, 5]) {
  %d: f32[4, 5] = aten.dropout.default(input=%x, p=0.1, train=False)
  %r: f32[4, 5] = aten.relu.default(self=%d)
  return (%r)
})", R"(graph(%x: f32[4, 5]) {
  %r: f32[4, 5] = aten.relu.default(self=%x)
  return (%r)
})");
}

TEST(RemoveDropout, KeepsTrainingDropoutOutsideInference) {
  auto pass = make_remove_dropout_pass();
  testing::PassCheck check;
  check.context.inference_mode = false;
  check.numeric = false;  // random op: nothing to compare
  const std::string text = R"(graph(%x: f32[4, 5]) {
  %d: f32[4, 5] = aten.dropout.default(input=%x, p=0.1, train=True)
  return (%d)
})";
  testing::expect_pass(*pass, text, text, check);
}

}  // namespace
}  // namespace kiln::lowering

namespace kiln::lowering {
namespace {

// Active dropout (train=True, p > 0) zeroes random elements: removing it changed the program's meaning even in
// an inference compile. It stays (and runs in PyTorch); only inactive forms go.
TEST(RemoveDropout, KeepsActiveDropoutInInference) {
  auto pass = make_remove_dropout_pass();
  testing::PassCheck check;
  check.context.inference_mode = true;
  check.numeric = false;  // random op: nothing to compare
  const std::string text = R"(graph(%x: f32[4, 5]) {
  %d: f32[4, 5] = aten.dropout.default(input=%x, p=0.1, train=True)
  return (%d)
})";
  testing::expect_pass(*pass, text, text, check);
}

// p = 0 is the identity whatever train says.
TEST(RemoveDropout, RemovesZeroProbabilityTrainingDropout) {
  auto pass = make_remove_dropout_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[4, 5]) {
  %d: f32[4, 5] = aten.dropout.default(input=%x, p=0.0, train=True)
  %r: f32[4, 5] = aten.relu.default(self=%d)
  return (%r)
})", R"(graph(%x: f32[4, 5]) {
  %r: f32[4, 5] = aten.relu.default(self=%x)
  return (%r)
})");
}

}  // namespace
}  // namespace kiln::lowering
