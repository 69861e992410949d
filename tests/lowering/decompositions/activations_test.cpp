#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

using testing::expect_decomposition;

// Elementwise rewrites of O(1) values: fp32 rounding differs by a few ulps (rtol 1e-5, atol 1e-6).
TEST(DecomposeActivations, Silu) {
  expect_decomposition(R"(graph(%x: f32[3, 4]) {
  %y: f32[3, 4] = aten.silu.default(self=%x)
  return (%y)
})", R"(graph(%x: f32[3, 4]) {
  %sigmoid: f32[3, 4] = aten.sigmoid.default(self=%x)
  %mul: f32[3, 4] = aten.mul.Tensor(self=%x, other=%sigmoid)
  return (%mul)
})");
}

TEST(DecomposeActivations, HardswishAndHardsigmoid) {
  expect_decomposition(R"(graph(%x: f32[3, 4]) {
  %y: f32[3, 4] = aten.hardswish.default(self=%x)
  %z: f32[3, 4] = aten.hardsigmoid.default(self=%x)
  return (%y, %z)
})", R"(graph(%x: f32[3, 4]) {
  %add: f32[3, 4] = aten.add.Scalar(self=%x, other=3.0, alpha=1)
  %clamp: f32[3, 4] = aten.clamp.default(self=%add, min=0.0, max=6.0)
  %div: f32[3, 4] = aten.div.Scalar(self=%clamp, other=6.0)
  %mul: f32[3, 4] = aten.mul.Tensor(self=%x, other=%div)
  %add_1: f32[3, 4] = aten.add.Scalar(self=%x, other=3.0, alpha=1)
  %clamp_1: f32[3, 4] = aten.clamp.default(self=%add_1, min=0.0, max=6.0)
  %div_1: f32[3, 4] = aten.div.Scalar(self=%clamp_1, other=6.0)
  return (%mul, %div_1)
})");
}

TEST(DecomposeActivations, MishRelu6Hardtanh) {
  expect_decomposition(R"(graph(%x: f32[3, 4]) {
  %y: f32[3, 4] = aten.mish.default(self=%x)
  %z: f32[3, 4] = aten.relu6.default(self=%x)
  %w: f32[3, 4] = aten.hardtanh.default(self=%x, min_val=-0.5, max_val=0.5)
  return (%y, %z, %w)
})", R"(graph(%x: f32[3, 4]) {
  %softplus: f32[3, 4] = aten.softplus.default(self=%x, beta=1, threshold=20)
  %tanh: f32[3, 4] = aten.tanh.default(self=%softplus)
  %mul: f32[3, 4] = aten.mul.Tensor(self=%x, other=%tanh)
  %clamp: f32[3, 4] = aten.clamp.default(self=%x, min=0.0, max=6.0)
  %clamp_1: f32[3, 4] = aten.clamp.default(self=%x, min=-0.5, max=0.5)
  return (%mul, %clamp, %clamp_1)
})");
}

TEST(DecomposeActivations, Glu) {
  expect_decomposition(R"(graph(%x: f32[3, 4]) {
  %y: f32[3, 2] = aten.glu.default(self=%x, dim=-1)
  return (%y)
})", R"(graph(%x: f32[3, 4]) {
  %slice: f32[3, 2] = aten.slice.Tensor(self=%x, dim=1, start=0, end=2, step=1)
  %slice_1: f32[3, 2] = aten.slice.Tensor(self=%x, dim=1, start=2, end=4, step=1)
  %sigmoid: f32[3, 2] = aten.sigmoid.default(self=%slice_1)
  %mul: f32[3, 2] = aten.mul.Tensor(self=%slice, other=%sigmoid)
  return (%mul)
})");
}

TEST(DecomposeActivations, KeptWhenAConverterTakesTheOp) {
  auto pass = make_decompose_pass();
  testing::PassCheck check;
  check.context.has_converter = [](const ir::Node& n) { return n.target().name == "silu"; };
  const std::string text = R"(graph(%x: f32[3, 4]) {
  %y: f32[3, 4] = aten.silu.default(self=%x)
  return (%y)
})";
  testing::expect_pass(*pass, text, text, check);
}

}  // namespace
}  // namespace kiln::lowering
