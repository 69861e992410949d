// simplify_attention_mask: attention reads the smallest boolean mask with the same meaning. Values are
// unchanged (the same boolean mask reaches the same softmax): rtol 1e-5 / atol 1e-6, fp32 rounding; rows with
// every key masked are NaN on both sides.

#include "kiln/frontend/program.h"
#include "kiln/lowering/pass_manager.h"
#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// transformers' bidirectional padding mask as exported (masking_utils' and_masks over q_idx >= 0 and the
// padding row), expanded to [B, 1, Lq, Lk] and given to attention.
constexpr const char* kEncoderMask =
    R"(graph(%q: f32[2, 2, 5, 8], %k: f32[2, 2, 5, 8], %v: f32[2, 2, 5, 8], %pad: bool[2, 1, 1, 5]) {
  %full: bool[] = aten.full.default(size=[], fill_value=1, *, dtype=dtype.bool, layout=None, device=None, pin_memory=None)
  %arange: i64[5] = aten.arange.start_step(start=0, end=5, step=1, *, dtype=dtype.i64, layout=None, device=None, pin_memory=None)
  %add: i64[5] = aten.add.Tensor(self=%arange, other=0, *, alpha=1)
  %u0: i64[1, 5] = aten.unsqueeze.default(self=%add, dim=0)
  %u1: i64[1, 1, 5] = aten.unsqueeze.default(self=%u0, dim=1)
  %u2: i64[1, 1, 5, 1] = aten.unsqueeze.default(self=%u1, dim=3)
  %ge: bool[1, 1, 5, 1] = aten.ge.Scalar(self=%u2, other=0)
  %and_1: bool[1, 1, 5, 1] = aten.__and__.Tensor(self=%full, other=%ge)
  %and_2: bool[2, 1, 5, 5] = aten.__and__.Tensor(self=%and_1, other=%pad)
  %e: bool[2, 1, 5, 5] = aten.expand.default(self=%and_2, size=[2, 1, 5, 5], *, implicit=False)
  %y: f32[2, 2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%e, dropout_p=0.0, is_causal=False, *, scale=0.125, enable_gqa=False)
  return (%y)
})";

std::string with_mask(std::string text, const std::string& from, const std::string& to) {
  const std::string key = "attn_mask=" + from + ",";
  text.replace(text.find(key), key.size(), "attn_mask=" + to + ",");
  return text;
}

TEST(SimplifyAttentionMask, TransformersPaddingMaskBecomesThePaddingRow) {
  auto pass = make_simplify_attention_mask_pass();
  testing::expect_pass(*pass, kEncoderMask, with_mask(kEncoderMask, "%e", "%pad"));
}

// The query factor is not provably true: q_idx >= 1 over an arange from 0 (row 0 is masked), an arange with a
// negative step, a comparison of an input, an integer AND. The mask stays, only its expand goes.
TEST(SimplifyAttentionMask, KeepsFactorsThatAreNotProvablyTrue) {
  auto pass = make_simplify_attention_mask_pass();
  std::string text = kEncoderMask;
  const std::string ge0 = "aten.ge.Scalar(self=%u2, other=0)";
  std::string ge1 = text;
  ge1.replace(ge1.find(ge0), ge0.size(), "aten.ge.Scalar(self=%u2, other=1)");
  testing::expect_pass(*pass, ge1, with_mask(ge1, "%e", "%and_2"));

  std::string down = text;
  const std::string range = "aten.arange.start_step(start=0, end=5, step=1,";
  down.replace(down.find(range), range.size(), "aten.arange.start_step(start=4, end=-1, step=-1,");
  testing::expect_pass(*pass, down, with_mask(down, "%e", "%and_2"));

  const std::string from_input =
      R"(graph(%q: f32[2, 2, 5, 8], %k: f32[2, 2, 5, 8], %v: f32[2, 2, 5, 8], %pad: bool[2, 1, 1, 5], %pos: i64[1, 1, 5, 1]) {
  %ge: bool[1, 1, 5, 1] = aten.ge.Scalar(self=%pos, other=0)
  %m: bool[2, 1, 5, 5] = aten.__and__.Tensor(self=%ge, other=%pad)
  %y: f32[2, 2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%m, dropout_p=0.0, is_causal=False, *, scale=0.125, enable_gqa=False)
  return (%y)
})";
  testing::expect_pass(*pass, from_input, from_input);
}

// The other forms the analysis accepts: arange.default, an add of two bounded tensors with alpha 2, gt
// against an integer below the bound, logical_and; and a rank-1 mask that loses its expand.
TEST(SimplifyAttentionMask, AcceptsTheOtherProvablyTrueForms) {
  auto pass = make_simplify_attention_mask_pass();
  const std::string text =
      R"(graph(%q: f32[2, 2, 5, 8], %k: f32[2, 2, 5, 8], %v: f32[2, 2, 5, 8], %pad: bool[2, 1, 1, 5]) {
  %a: i64[5] = aten.arange.default(end=5, *, dtype=None, layout=None, device=None, pin_memory=None)
  %s: i64[5] = aten.add.Tensor(self=%a, other=%a, *, alpha=2)
  %u: i64[5, 1] = aten.unsqueeze.default(self=%s, dim=1)
  %gt: bool[5, 1] = aten.gt.Scalar(self=%u, other=-1)
  %m: bool[2, 1, 5, 5] = aten.logical_and.default(self=%pad, other=%gt)
  %y: f32[2, 2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%m, dropout_p=0.0, is_causal=False, *, scale=0.125, enable_gqa=False)
  return (%y)
})";
  testing::expect_pass(*pass, text, with_mask(text, "%m", "%pad"));

  const std::string row =
      R"(graph(%q: f32[2, 2, 5, 8], %k: f32[2, 2, 5, 8], %v: f32[2, 2, 5, 8], %pad: bool[5]) {
  %e: bool[2, 2, 5, 5] = aten.expand.default(self=%pad, size=[2, 2, 5, 5], *, implicit=False)
  %y: f32[2, 2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%e, dropout_p=0.0, is_causal=False, *, scale=0.125, enable_gqa=False)
  return (%y)
})";
  testing::expect_pass(*pass, row, with_mask(row, "%e", "%pad"));
}

// What the analysis must not prove: an int32 arange pushed past int32's range (its elements wrap), a float
// `other` (torch compares in float32), a product of bounds that overflows; and a mask whose true factor
// widens the batch beyond the query's (dropping it would change the output's shape; not run numerically).
TEST(SimplifyAttentionMask, RefusesWhatItCannotProve) {
  auto pass = make_simplify_attention_mask_pass();
  const std::string wrap =
      R"(graph(%q: f32[2, 2, 5, 8], %k: f32[2, 2, 5, 8], %v: f32[2, 2, 5, 8], %pad: bool[2, 1, 1, 5]) {
  %a: i32[5] = aten.arange.default(end=5, *, dtype=dtype.i32, layout=None, device=None, pin_memory=None)
  %s: i32[5] = aten.add.Tensor(self=%a, other=2147483645, *, alpha=1)
  %u: i32[5, 1] = aten.unsqueeze.default(self=%s, dim=1)
  %ge: bool[5, 1] = aten.ge.Scalar(self=%u, other=0)
  %m: bool[2, 1, 5, 5] = aten.__and__.Tensor(self=%ge, other=%pad)
  %y: f32[2, 2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%m, dropout_p=0.0, is_causal=False, *, scale=0.125, enable_gqa=False)
  return (%y)
})";
  testing::expect_pass(*pass, wrap, wrap);

  std::string float_other = wrap;
  for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"i32[5] = aten.arange.default(end=5, *, dtype=dtype.i32",
            "i64[5] = aten.arange.default(end=5, *, dtype=dtype.i64"},
           {"%s: i32[5] = aten.add.Tensor(self=%a, other=2147483645",
            "%s: i64[5] = aten.add.Tensor(self=%a, other=0"},
           {"%u: i32[5, 1]", "%u: i64[5, 1]"},
           {"aten.ge.Scalar(self=%u, other=0)", "aten.ge.Scalar(self=%u, other=-0.5)"}}) {
    float_other.replace(float_other.find(from), from.size(), to);
  }
  testing::expect_pass(*pass, float_other, float_other);

  std::string overflow = float_other;
  for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"aten.add.Tensor(self=%a, other=0, *, alpha=1)",
            "aten.add.Tensor(self=%a, other=1099511627776, *, alpha=1099511627776)"},
           {"aten.ge.Scalar(self=%u, other=-0.5)", "aten.ge.Scalar(self=%u, other=0)"}}) {
    overflow.replace(overflow.find(from), from.size(), to);
  }
  testing::expect_pass(*pass, overflow, overflow);

  const std::string widens =
      R"(graph(%q: f32[1, 2, 5, 8], %k: f32[1, 2, 5, 8], %v: f32[1, 2, 5, 8], %pad: bool[1, 1, 1, 5]) {
  %t: bool[2, 1, 1, 1] = aten.full.default(size=[2, 1, 1, 1], fill_value=1, *, dtype=dtype.bool, layout=None, device=None, pin_memory=None)
  %m: bool[2, 1, 1, 5] = aten.__and__.Tensor(self=%t, other=%pad)
  %y: f32[2, 2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%m, dropout_p=0.0, is_causal=False, *, scale=0.125, enable_gqa=False)
  return (%y)
})";
  testing::PassCheck no_numbers;
  no_numbers.numeric = false;
  testing::expect_pass(*pass, widens, widens, no_numbers);
}

// An additive float mask loses its expand only (attention broadcasts it the same way).
TEST(SimplifyAttentionMask, DropsTheExpandOfAFloatMask) {
  auto pass = make_simplify_attention_mask_pass();
  const std::string text =
      R"(graph(%q: f32[2, 2, 5, 8], %k: f32[2, 2, 5, 8], %v: f32[2, 2, 5, 8], %m: f32[2, 1, 1, 5]) {
  %e: f32[2, 2, 5, 5] = aten.expand.default(self=%m, size=[2, 2, 5, 5], *, implicit=False)
  %y: f32[2, 2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%e, dropout_p=0.0, is_causal=False, *, scale=0.125, enable_gqa=False)
  return (%y)
})";
  testing::expect_pass(*pass, text, with_mask(text, "%e", "%m"));
}

// The exported HF BERT (dynamic batch and sequence): after the default lowering every attention reads the
// [batch, 1, 1, seq] padding row, not the [batch, 1, seq, seq] AND.
TEST(SimplifyAttentionMask, ExportedBertReadsThePaddingRow) {
  frontend::Program program = frontend::load_program(std::string(KILN_TEST_DATA_DIR) + "/zoo/bert/model.pt2");
  apply_lowering_passes(*program.graph, PassContext{});
  int attentions = 0;
  for (const ir::Node* node : program.graph->nodes()) {
    if (node->target().packet() != "aten.scaled_dot_product_attention") continue;
    ++attentions;
    const ir::Value* mask = node->arg("attn_mask").as_tensor();
    ASSERT_EQ(mask->meta().rank(), 4);
    EXPECT_EQ(mask->meta().sizes[2].to_string(), "1") << node->name();
    EXPECT_NE(mask->meta().sizes[3].to_string(), "1") << node->name();
  }
  EXPECT_EQ(attentions, 2);
}

}  // namespace
}  // namespace kiln::lowering
