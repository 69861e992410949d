// transformers' repeat_kv of an attention's key and value becomes enable_gqa on the un-repeated tensors, and
// the repeat's nodes go; other forms stay. Values: the converter cases Cases/LinalgConverters.MatchesTorch/
// sdpa_gqa* against torch, and the zoo's llama.

#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

/// repeat_kv of %<x> ([s0, 2, s1, 8], group `g` giving `h` heads), as %<x>_r, the way the export writes it
/// after canonicalize_views; `insert` is the op that adds the group dim.
std::string repeat_kv(const std::string& x, int g, const std::string& insert = "") {
  const std::string h = std::to_string(2 * g), gs = std::to_string(g);
  const std::string add_dim = insert.empty()
                                  ? "aten.unsqueeze.default(self=%" + x + ", dim=2)"
                                  : "aten.reshape.default(self=%" + x + ", shape=[%b, 2, 1, %l, 8])";
  return "  %" + x + "_u: f32[s0, 2, 1, s1, 8] = " + add_dim + "\n" + "  %" + x + "_e: f32[s0, 2, " + gs +
         ", s1, 8] = aten.expand.default(self=%" + x + "_u, size=[%b, 2, " + gs +
         ", %l, 8], *, implicit=False)\n" + "  %" + x + "_r: f32[s0, " + h +
         ", s1, 8] = aten.reshape.default(self=%" + x + "_e, shape=[%b, " + h + ", %l, 8])\n";
}

const char* const kHeader =
    "graph(%q: f32[s0, 6, s1, 8], %k: f32[s0, 2, s1, 8], %v: f32[s0, 2, s1, 8]) {\n"
    "  symbol s0 in [1, 8] hint 2\n  symbol s1 in [1, 64] hint 5\n"
    "  %b: sym_int(s0) = aten.sym_size.int(self=%k, dim=0)\n  %l: sym_int(s1) = aten.sym_size.int(self=%k, "
    "dim=2)\n";

std::string sdpa(const std::string& k, const std::string& v, const std::string& gqa) {
  return "  %y: f32[s0, 6, s1, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%" + k +
         ", value=%" + v +
         ", attn_mask=None, dropout_p=0.0, is_causal=True, *, scale=None, enable_gqa=" + gqa + ")\n";
}

TEST(FuseGroupedQueryAttention, RepeatKvBecomesEnableGqa) {
  auto pass = make_fuse_grouped_query_attention_pass();
  for (const char* insert : {"", "reshape"}) {
    SCOPED_TRACE(*insert ? insert : "unsqueeze");
    testing::expect_pass(
        *pass,
        kHeader + repeat_kv("k", 3, insert) + repeat_kv("v", 3, insert) + sdpa("k_r", "v_r", "False") +
            "  return (%y)\n}",
        std::string(kHeader) +
            "  %scaled_dot_product_attention: f32[s0, 6, s1, 8] = "
            "aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=None, "
            "dropout_p=0.0, is_causal=True, *, scale=None, enable_gqa=True)\n"
            "  return (%scaled_dot_product_attention)\n}");
  }
}

// The repeated key also read elsewhere: the attention reads the kv heads, the key's repeat stays for the
// other reader (the value's goes).
TEST(FuseGroupedQueryAttention, KeepsARepeatReadElsewhere) {
  auto pass = make_fuse_grouped_query_attention_pass();
  testing::expect_pass(
      *pass,
      kHeader + repeat_kv("k", 3) + repeat_kv("v", 3) + sdpa("k_r", "v_r", "False") +
          "  return (%y, %k_r)\n}",
      kHeader + repeat_kv("k", 3) +
          "  %scaled_dot_product_attention: f32[s0, 6, s1, 8] = "
          "aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=None, "
          "dropout_p=0.0, is_causal=True, *, scale=None, enable_gqa=True)\n"
          "  return (%scaled_dot_product_attention, %k_r)\n}");
}

// Key and value one repeated tensor (read twice): rewritten, the repeat erased once.
TEST(FuseGroupedQueryAttention, KeyAndValueOneTensor) {
  auto pass = make_fuse_grouped_query_attention_pass();
  testing::expect_pass(
      *pass, kHeader + repeat_kv("k", 3) + sdpa("k_r", "k_r", "False") + "  return (%y)\n}",
      std::string(kHeader) +
          "  %scaled_dot_product_attention: f32[s0, 6, s1, 8] = "
          "aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%k, attn_mask=None, "
          "dropout_p=0.0, is_causal=True, *, scale=None, enable_gqa=True)\n"
          "  return (%scaled_dot_product_attention)\n}");
}

// A query with one head over the 6 repeated ones (sdpa broadcasts it; enable_gqa would refuse): unchanged.
TEST(FuseGroupedQueryAttention, KeepsAQueryOfOtherHeads) {
  auto pass = make_fuse_grouped_query_attention_pass();
  const std::string g =
      "graph(%q: f32[s0, 1, s1, 8], %k: f32[s0, 2, s1, 8], %v: f32[s0, 2, s1, 8]) {\n"
      "  symbol s0 in [1, 8] hint 2\n  symbol s1 in [1, 64] hint 5\n"
      "  %b: sym_int(s0) = aten.sym_size.int(self=%k, dim=0)\n  %l: sym_int(s1) = aten.sym_size.int(self=%k, "
      "dim=2)\n" +
      repeat_kv("k", 3) + repeat_kv("v", 3) +
      "  %y: f32[s0, 6, s1, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k_r, value=%v_r, "
      "attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False)\n  return (%y)\n}";
  testing::expect_pass(*pass, g, g);
}

// Only the key repeated; a repeat over the wrong dim (an expand of a
// size-1 dim inserted at 1: heads in the other order); all unchanged.
TEST(FuseGroupedQueryAttention, KeepsOtherForms) {
  auto pass = make_fuse_grouped_query_attention_pass();
  const std::string wrong_dim =
      "  %v_u: f32[s0, 1, 2, s1, 8] = aten.unsqueeze.default(self=%v, dim=1)\n"
      "  %v_e: f32[s0, 3, 2, s1, 8] = aten.expand.default(self=%v_u, size=[%b, 3, 2, %l, 8], *, "
      "implicit=False)\n"
      "  %v_r: f32[s0, 6, s1, 8] = aten.reshape.default(self=%v_e, shape=[%b, 6, %l, 8])\n";
  const std::string header6 =
      "graph(%q: f32[s0, 6, s1, 8], %k: f32[s0, 2, s1, 8], %v: f32[s0, 2, s1, 8], %v6: f32[s0, 6, s1, 8]) {\n"
      "  symbol s0 in [1, 8] hint 2\n  symbol s1 in [1, 64] hint 5\n"
      "  %b: sym_int(s0) = aten.sym_size.int(self=%k, dim=0)\n  %l: sym_int(s1) = aten.sym_size.int(self=%k, "
      "dim=2)\n";
  for (const std::string& g : {header6 + repeat_kv("k", 3) + sdpa("k_r", "v6", "False"),
                               kHeader + repeat_kv("k", 3) + wrong_dim + sdpa("k_r", "v_r", "False")}) {
    testing::expect_pass(*pass, g + "  return (%y)\n}", g + "  return (%y)\n}");
  }
}

}  // namespace
}  // namespace kiln::lowering
