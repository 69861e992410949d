#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// log(softmax(x)) vs log_softmax on N(0, 1) inputs of width 5: log of probabilities >= ~1e-3, so the
// difference is fp32 rounding of the log (rtol 1e-5, atol 1e-6).
TEST(DecomposeSoftmax, LogSoftmaxBothForms) {
  testing::expect_decomposition(R"(graph(%x: f32[3, 5]) {
  %y: f32[3, 5] = aten.log_softmax.int(self=%x, dim=-1, dtype=None)
  %z: f32[3, 5] = aten._log_softmax.default(self=%x, dim=0, half_to_float=False)
  return (%y, %z)
})", R"(graph(%x: f32[3, 5]) {
  %softmax: f32[3, 5] = aten.softmax.int(self=%x, dim=1, dtype=None)
  %log: f32[3, 5] = aten.log.default(self=%softmax)
  %softmax_1: f32[3, 5] = aten.softmax.int(self=%x, dim=0, dtype=None)
  %log_1: f32[3, 5] = aten.log.default(self=%softmax_1)
  return (%log, %log_1)
})");
}

TEST(DecomposeSoftmax, SoftmaxIsKeptWhole) {
  auto pass = make_decompose_pass();
  const std::string text = R"(graph(%x: f32[3, 5]) {
  %y: f32[3, 5] = aten.softmax.int(self=%x, dim=1, dtype=None)
  return (%y)
})";
  testing::expect_pass(*pass, text, text);
}

}  // namespace
}  // namespace kiln::lowering
