// Attention written out in matrix products becomes aten.scaled_dot_product_attention. libtorch's sdpa
// computes the same products and softmax in float, in another order (it scales q or the scores, fuses the
// softmax): rtol 1e-5, atol 1e-5 on probabilities and values of size ~1.

#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

testing::PassCheck attention_check() {
  testing::PassCheck check;
  check.atol = 1e-5;
  return check;
}

// GPT-2's eager attention after decomposition: k transposed by a permute, scores scaled by a multiply, the
// causal/padding mask added, softmax over the keys, the weighted sum of v.
TEST(FuseAttention, EagerAttentionBecomesSdpa) {
  auto pass = make_fuse_attention_pass();
  testing::expect_pass(
      *pass, R"(graph(%q: f32[1, 2, 5, 8], %k: f32[1, 2, 5, 8], %v: f32[1, 2, 5, 8], %mask: f32[1, 1, 5, 5]) {
  %kt: f32[1, 2, 8, 5] = aten.permute.default(self=%k, dims=[0, 1, 3, 2])
  %s: f32[1, 2, 5, 5] = aten.matmul.default(self=%q, other=%kt)
  %c: f32[1, 2, 5, 5] = aten.mul.Tensor(self=%s, other=0.125)
  %m: f32[1, 2, 5, 5] = aten.add.Tensor(self=%c, other=%mask, *, alpha=1)
  %p: f32[1, 2, 5, 5] = aten.softmax.int(self=%m, dim=-1, dtype=None)
  %y: f32[1, 2, 5, 8] = aten.matmul.default(self=%p, other=%v)
  return (%y)
})",
      R"(graph(%q: f32[1, 2, 5, 8], %k: f32[1, 2, 5, 8], %v: f32[1, 2, 5, 8], %mask: f32[1, 1, 5, 5]) {
  %scaled_dot_product_attention: f32[1, 2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%mask, dropout_p=0.0, is_causal=False, *, scale=0.125, enable_gqa=False)
  return (%scaled_dot_product_attention)
})",
      attention_check());
}

// No mask, the scores divided (scale 1/c), k transposed by transpose.int, the mask operand first in the add,
// and no scaling at all (scale 1). Same tolerance as above.
TEST(FuseAttention, ScaleAndMaskForms) {
  auto pass = make_fuse_attention_pass();
  testing::expect_pass(*pass, R"(graph(%q: f32[2, 5, 8], %k: f32[2, 7, 8], %v: f32[2, 7, 3]) {
  %kt: f32[2, 8, 7] = aten.transpose.int(self=%k, dim0=-1, dim1=-2)
  %s: f32[2, 5, 7] = aten.matmul.default(self=%q, other=%kt)
  %c: f32[2, 5, 7] = aten.div.Tensor(self=%s, other=4.0)
  %p: f32[2, 5, 7] = aten._softmax.default(self=%c, dim=2, half_to_float=False)
  %y: f32[2, 5, 3] = aten.matmul.default(self=%p, other=%v)
  return (%y)
})",
                       R"(graph(%q: f32[2, 5, 8], %k: f32[2, 7, 8], %v: f32[2, 7, 3]) {
  %scaled_dot_product_attention: f32[2, 5, 3] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=0.25, enable_gqa=False)
  return (%scaled_dot_product_attention)
})",
                       attention_check());
  testing::expect_pass(*pass,
                       R"(graph(%q: f32[2, 5, 8], %k: f32[2, 5, 8], %v: f32[2, 5, 8], %mask: f32[5, 5]) {
  %kt: f32[2, 8, 5] = aten.permute.default(self=%k, dims=[0, 2, 1])
  %s: f32[2, 5, 5] = aten.matmul.default(self=%q, other=%kt)
  %m: f32[2, 5, 5] = aten.add.Tensor(self=%mask, other=%s, *, alpha=1)
  %p: f32[2, 5, 5] = aten.softmax.int(self=%m, dim=-1, dtype=None)
  %y: f32[2, 5, 8] = aten.matmul.default(self=%p, other=%v)
  return (%y)
})",
                       R"(graph(%q: f32[2, 5, 8], %k: f32[2, 5, 8], %v: f32[2, 5, 8], %mask: f32[5, 5]) {
  %scaled_dot_product_attention: f32[2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%mask, dropout_p=0.0, is_causal=False, *, scale=1.0, enable_gqa=False)
  return (%scaled_dot_product_attention)
})",
                       attention_check());
}

// What is not that attention stays: scores read elsewhere too, a softmax over another dim, k not transposed
// (a plain product), and q and k with different batch dims (broadcast).
TEST(FuseAttention, KeepsOtherProducts) {
  auto pass = make_fuse_attention_pass();
  const auto graph = [](const std::string& kt, const std::string& dim, const std::string& extra_output,
                        const std::string& q_batch) {
    return R"(graph(%q: f32[)" + q_batch + R"(, 5, 8], %k: f32[2, 5, 8], %v: f32[2, 5, 8]) {
  %kt: f32[2, 8, 5] = )" +
           kt + R"(
  %s: f32[2, 5, 5] = aten.matmul.default(self=%q, other=%kt)
  %p: f32[2, 5, 5] = aten.softmax.int(self=%s, dim=)" +
           dim + R"(, dtype=None)
  %y: f32[2, 5, 8] = aten.matmul.default(self=%p, other=%v)
  return (%y)" +
           extra_output + R"()
})";
  };
  const std::string permute = "aten.permute.default(self=%k, dims=[0, 2, 1])";
  for (const std::string& kept : {graph(permute, "-1", ", %s", "2"), graph(permute, "1", "", "2"),
                                  graph("aten.reshape.default(self=%k, shape=[2, 8, 5])", "-1", "", "2"),
                                  graph(permute, "-1", "", "1")}) {
    testing::expect_pass(*pass, kept, kept, attention_check());
  }
  // The template itself, with none of the differences, is the attention.
  EXPECT_TRUE(pass->run(*ir::parse_graph(graph(permute, "-1", "", "2")), PassContext{}));
}

}  // namespace
}  // namespace kiln::lowering
