// Matrix product and attention converters against libtorch eager: linear with/without bias (frozen and tensor
// weights), addmm with alpha/beta, mm, bmm, matmul with 1-D and broadcast operands,
// scaled_dot_product_attention (no mask, boolean mask, additive mask, causal, explicit scale, transformers'
// decoder mask, grouped-query attention). Dynamic batch where the converter claims it. Tolerance: the harness
// default fp32 allclose(1e-4, 1e-5) (dot products of <= 32 terms of magnitude <= 2).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase linalg_case(const std::string& name, const std::string& inputs, const std::string& body,
                      std::vector<std::vector<std::vector<int64_t>>> runs = {},
                      std::map<size_t, InputFill> fills = {}) {
  return graph_case(name, inputs, "s0 in [1, 8] hint 2", body, std::move(runs), std::move(fills));
}

std::string sdpa(const std::string& mask, const std::string& causal, const std::string& scale) {
  return "  %y: f32[s0, 2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, "
         "attn_mask=" + mask + ", dropout_p=0.0, is_causal=" + causal + ", *, scale=" + scale +
         ", enable_gqa=False)\n  return (%y)\n";
}

/// Grouped-query attention: %q with 6 heads over %k / %v with 2 (enable_gqa).
std::string gqa_sdpa(const std::string& mask, const std::string& causal, const std::string& scale) {
  return "  %y: f32[s0, 6, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, "
         "attn_mask=" +
         mask + ", dropout_p=0.0, is_causal=" + causal + ", *, scale=" + scale +
         ", enable_gqa=True)\n  return (%y)\n";
}

/// transformers' decoder mask over 5 queries and keys: %and_1 = ones & (kv_idx <= q_idx), %m = a AND b.
std::string decoder_mask(const std::string& a, const std::string& b) {
  const std::string batch = b == "%pad" ? "s0" : "1";
  return "  %full: bool[] = aten.full.default(size=[], fill_value=1, *, dtype=dtype.bool, layout=None, "
         "device=None, pin_memory=None)\n"
         "  %ar: i64[5] = aten.arange.default(end=5, *, dtype=dtype.i64, layout=None, device=None, "
         "pin_memory=None)\n"
         "  %q0: i64[1, 5] = aten.unsqueeze.default(self=%ar, dim=0)\n"
         "  %q1: i64[1, 1, 5] = aten.unsqueeze.default(self=%q0, dim=1)\n"
         "  %q2: i64[1, 1, 5, 1] = aten.unsqueeze.default(self=%q1, dim=3)\n"
         "  %k2: i64[1, 1, 1, 5] = aten.unsqueeze.default(self=%q1, dim=2)\n"
         "  %c: bool[1, 1, 5, 5] = aten.le.Tensor(self=%k2, other=%q2)\n"
         "  %and_1: bool[1, 1, 5, 5] = aten.__and__.Tensor(self=%full, other=%c)\n"
         "  %m: bool[" + batch + ", 1, 5, 5] = aten.__and__.Tensor(self=" + a + ", other=" + b + ")\n";
}

CaseList linalg_cases() {
  const std::string qkv = "%q: f32[s0, 2, 5, 8], %k: f32[s0, 2, 5, 8], %v: f32[s0, 2, 5, 8]";
  const std::vector<std::vector<std::vector<int64_t>>> qkv_runs = {{{1, 2, 5, 8}, {1, 2, 5, 8}, {1, 2, 5, 8}},
                                                                    {{3, 2, 5, 8}, {3, 2, 5, 8}, {3, 2, 5, 8}}};
  const std::string gqa_qkv = "%q: f32[s0, 6, 5, 8], %k: f32[s0, 2, 7, 8], %v: f32[s0, 2, 7, 8]";
  auto gqa_runs = [](std::vector<int64_t> mask) {
    std::vector<std::vector<std::vector<int64_t>>> runs;
    for (int64_t b : {1, 3}) {
      runs.push_back({{b, 6, 5, 8}, {b, 2, 7, 8}, {b, 2, 7, 8}});
      if (!mask.empty()) runs.back().push_back({b, mask[0], mask[1], mask[2]});
    }
    return runs;
  };
  auto with_mask = [&](std::vector<int64_t> m) {
    auto r = qkv_runs;
    for (auto& run : r) run.push_back(m);
    return r;
  };
  return {
      linalg_case("linear", "%x: f32[s0, 3, 16]",
                  "  %w: f32[12, 16] = parameter(\"fc.weight\")\n  %b: f32[12] = parameter(\"fc.bias\")\n"
                  "  %y: f32[s0, 3, 12] = aten.linear.default(input=%x, weight=%w, bias=%b)\n  return (%y)\n",
                  {{{2, 3, 16}}, {{5, 3, 16}}}),
      linalg_case("linear_no_bias_1d", "%x: f32[16]",
                  "  %w: f32[12, 16] = parameter(\"fc.weight\")\n"
                  "  %y: f32[12] = aten.linear.default(input=%x, weight=%w, bias=None)\n  return (%y)\n"),
      linalg_case("linear_tensor_weight", "%x: f32[s0, 16], %w: f32[12, 16]",
                  "  %y: f32[s0, 12] = aten.linear.default(input=%x, weight=%w, bias=None)\n  return (%y)\n",
                  {{{2, 16}, {12, 16}}, {{7, 16}, {12, 16}}}),
      linalg_case("addmm", "%x: f32[s0, 16]",
                  "  %w: f32[16, 12] = parameter(\"fc.weight_t\")\n  %b: f32[12] = parameter(\"fc.bias\")\n"
                  "  %y: f32[s0, 12] = aten.addmm.default(self=%b, mat1=%x, mat2=%w, *, beta=1, alpha=1)\n  "
                  "return (%y)\n",
                  {{{2, 16}}, {{6, 16}}}),
      linalg_case("addmm_alpha_beta", "%c: f32[4, 12], %x: f32[4, 16], %w: f32[16, 12]",
                  "  %y: f32[4, 12] = aten.addmm.default(self=%c, mat1=%x, mat2=%w, *, beta=0.5, alpha=2.0)\n"
                  "  return (%y)\n"),
      linalg_case("mm", "%x: f32[s0, 16], %w: f32[16, 9]",
                  "  %y: f32[s0, 9] = aten.mm.default(self=%x, mat2=%w)\n  return (%y)\n",
                  {{{3, 16}, {16, 9}}, {{5, 16}, {16, 9}}}),
      linalg_case("bmm", "%x: f32[s0, 4, 16], %w: f32[s0, 16, 9]",
                  "  %y: f32[s0, 4, 9] = aten.bmm.default(self=%x, mat2=%w)\n  return (%y)\n",
                  {{{2, 4, 16}, {2, 16, 9}}, {{3, 4, 16}, {3, 16, 9}}}),
      linalg_case("matmul_broadcast", "%x: f32[s0, 3, 4, 16], %w: f32[16, 9]",
                  "  %y: f32[s0, 3, 4, 9] = aten.matmul.default(self=%x, other=%w)\n  return (%y)\n",
                  {{{2, 3, 4, 16}, {16, 9}}, {{4, 3, 4, 16}, {16, 9}}}),
      linalg_case("matmul_vector_rhs", "%x: f32[3, 4, 16], %w: f32[16]",
                  "  %y: f32[3, 4] = aten.matmul.default(self=%x, other=%w)\n  return (%y)\n"),
      linalg_case("matmul_vector_lhs", "%x: f32[16], %w: f32[2, 16, 5]",
                  "  %y: f32[2, 5] = aten.matmul.default(self=%x, other=%w)\n  return (%y)\n"),
      linalg_case("matmul_dot", "%x: f32[16], %w: f32[16]",
                  "  %y: f32[] = aten.matmul.default(self=%x, other=%w)\n  return (%y)\n"),
      linalg_case("sdpa", qkv, sdpa("None", "False", "None"), qkv_runs),
      linalg_case("sdpa_causal", qkv, sdpa("None", "True", "None"), qkv_runs),
      linalg_case("sdpa_scale", qkv, sdpa("None", "False", "0.2"), qkv_runs),
      linalg_case("sdpa_bool_mask", qkv + ", %m: bool[5, 5]", sdpa("%m", "False", "None"), with_mask({5, 5}),
                  {{3, {-0.5, 2}}}),
      // transformers' decoder mask (ones & kv_idx <= q_idx & padding), which the converter reads as the
      // causal flag and the padding row; the padding keeps key 0, so that no row is fully masked. Then the
      // causal factor alone.
      linalg_case("sdpa_decoder_mask", qkv + ", %pad: bool[s0, 1, 1, 5]",
                  decoder_mask("%and_1", "%pad") + sdpa("%m", "False", "None"),
                  {{{1, 2, 5, 8}, {1, 2, 5, 8}, {1, 2, 5, 8}, {1, 1, 1, 5}},
                   {{3, 2, 5, 8}, {3, 2, 5, 8}, {3, 2, 5, 8}, {3, 1, 1, 5}}},
                  {{3, {.values = {1, 1, 1, 1, 0, 1, 1, 0, 1, 1}}}}),
      // Left padding: batch 0's first key is masked, so its first query sees no key at all (0, as torch 2.x's
      // safe softmax; the reference on torch 1.13 is Kiln's builtin, which does the same).
      linalg_case("sdpa_decoder_mask_left_padding", qkv + ", %pad: bool[s0, 1, 1, 5]",
                  decoder_mask("%and_1", "%pad") + sdpa("%m", "False", "None"),
                  {{{1, 2, 5, 8}, {1, 2, 5, 8}, {1, 2, 5, 8}, {1, 1, 1, 5}},
                   {{3, 2, 5, 8}, {3, 2, 5, 8}, {3, 2, 5, 8}, {3, 1, 1, 5}}},
                  {{3, {.values = {0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}}}}),
      linalg_case("sdpa_decoder_mask_no_padding", qkv,
                  decoder_mask("%full", "%and_1") + sdpa("%m", "False", "0.3"), qkv_runs),
      // Grouped-query attention: 6 query heads over 2 key / value heads (each read by 3 consecutive query
      // heads), 5 queries over 7 keys; causal, then an additive mask and a scale.
      linalg_case("sdpa_gqa_causal", gqa_qkv, gqa_sdpa("None", "True", "None"), gqa_runs({})),
      linalg_case("sdpa_gqa_float_mask", gqa_qkv + ", %m: f32[s0, 1, 5, 7]", gqa_sdpa("%m", "False", "0.3"),
                  gqa_runs({1, 5, 7})),
      linalg_case("sdpa_float_mask", qkv + ", %m: f32[s0, 1, 5, 5]", sdpa("%m", "False", "None"),
                  {{{1, 2, 5, 8}, {1, 2, 5, 8}, {1, 2, 5, 8}, {1, 1, 5, 5}},
                   {{3, 2, 5, 8}, {3, 2, 5, 8}, {3, 2, 5, 8}, {3, 1, 5, 5}}}),
  };
}

KILN_CONVERTER_CASES(Linalg, linalg_cases);

}  // namespace
}  // namespace kiln::conversion::testing
