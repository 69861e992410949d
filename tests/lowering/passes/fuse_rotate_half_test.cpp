// Rotary embeddings' rotate_half becomes one index_select and a sign multiply, and its slices and negation go
// (values compared with the original graph by the pass check); other concatenations stay.

#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// transformers' Llama: q * cos + rotate_half(q) * sin over [B, H, L, 8], a dynamic batch; the upper half's
// slice as the export writes it after normalize_dims_and_slices (end clamped to the size).
TEST(FuseRotateHalf, LlamaRotaryEmbedding) {
  auto pass = make_fuse_rotate_half_pass();
  const std::string header =
      "graph(%q: f32[s0, 2, 5, 8], %cos: f32[s0, 1, 5, 8], %sin: f32[s0, 1, 5, 8]) {\n"
      "  symbol s0 in [1, 8] hint 2\n";
  auto tail = [](const std::string& rotated) {
    return "  %mul_1: f32[s0, 2, 5, 8] = aten.mul.Tensor(self=%q, other=%cos)\n"
           "  %mul_2: f32[s0, 2, 5, 8] = aten.mul.Tensor(self=%" +
           rotated +
           ", other=%sin)\n"
           "  %y: f32[s0, 2, 5, 8] = aten.add.Tensor(self=%mul_1, other=%mul_2, *, alpha=1)\n"
           "  return (%y)\n}";
  };
  testing::expect_pass(
      *pass,
      header +
          "  %x1: f32[s0, 2, 5, 4] = aten.slice.Tensor(self=%q, dim=3, start=0, end=4, step=1)\n"
          "  %x2: f32[s0, 2, 5, 4] = aten.slice.Tensor(self=%q, dim=3, start=4, end=8, step=1)\n"
          "  %neg: f32[s0, 2, 5, 4] = aten.neg.default(self=%x2)\n"
          "  %rot: f32[s0, 2, 5, 8] = aten.cat.default(tensors=[%neg, %x1], dim=3)\n" +
          tail("rot"),
      header +
          "  %rotate_half_index: i64[8] = constant(\"rotate_half_index\")\n"
          "  %rotate_half_sign: f32[8] = constant(\"rotate_half_sign\")\n"
          "  %rotate_half: f32[s0, 2, 5, 8] = aten.index_select.default(self=%q, dim=3, "
          "index=%rotate_half_index)\n"
          "  %rotate_half_signed: f32[s0, 2, 5, 8] = aten.mul.Tensor(self=%rotate_half, "
          "other=%rotate_half_sign)\n" +
          tail("rotate_half_signed"));
}

// The negated half first in the other order, a half of another tensor, a cat along another dim: unchanged.
TEST(FuseRotateHalf, KeepsOtherConcatenations) {
  auto pass = make_fuse_rotate_half_pass();
  for (const std::string body : {
           "  %a: f32[3, 4] = aten.slice.Tensor(self=%x, dim=1, start=0, end=4, step=1)\n"
           "  %b: f32[3, 4] = aten.slice.Tensor(self=%x, dim=1, start=4, end=8, step=1)\n"
           "  %n: f32[3, 4] = aten.neg.default(self=%a)\n"
           "  %y: f32[3, 8] = aten.cat.default(tensors=[%n, %b], dim=1)\n",
           "  %a: f32[3, 4] = aten.slice.Tensor(self=%x, dim=1, start=0, end=4, step=1)\n"
           "  %b: f32[3, 4] = aten.slice.Tensor(self=%w, dim=1, start=4, end=8, step=1)\n"
           "  %n: f32[3, 4] = aten.neg.default(self=%b)\n"
           "  %y: f32[3, 8] = aten.cat.default(tensors=[%n, %a], dim=1)\n",
           "  %a: f32[3, 4] = aten.slice.Tensor(self=%x, dim=1, start=0, end=4, step=1)\n"
           "  %b: f32[3, 4] = aten.slice.Tensor(self=%x, dim=1, start=4, end=8, step=1)\n"
           "  %n: f32[3, 4] = aten.neg.default(self=%b)\n"
           "  %y: f32[6, 4] = aten.cat.default(tensors=[%n, %a], dim=0)\n",
       }) {
    const std::string g = "graph(%x: f32[3, 8], %w: f32[3, 8]) {\n" + body + "  return (%y)\n}";
    testing::expect_pass(*pass, g, g);
  }
}

}  // namespace
}  // namespace kiln::lowering
