// The attention converter reads transformers' decoder mask `ones & (kv_idx <= q_idx) & padding` as the
// engine's causal flag and the padding row (conversion/converters/attention/sdpa.cpp): the layer it makes,
// and the masks it must leave whole. Values: the Linalg converter cases (sdpa_decoder_mask*) compare with
// libtorch.

#include <gtest/gtest.h>

#include <string>

#include "kiln/conversion/interpreter.h"
#include "kiln/engine/network.h"
#include "kiln/engine/ops/attention/attention.h"
#include "kiln/ir/text.h"

namespace kiln::conversion {
namespace {

/// A decoder's attention with transformers' mask (masking_utils' and_masks of the causal and padding
/// functions); `q_offset` and `compare` vary the causal factor (kv_idx <= q_idx + q_offset).
std::string decoder_mask_graph(const std::string& q_offset = "0",
                               const std::string& compare = "aten.le.Tensor") {
  return R"(graph(%q: f32[s0, 2, 5, 8], %k: f32[s0, 2, 5, 8], %v: f32[s0, 2, 5, 8], %pad: bool[s0, 1, 1, 5]) {
  symbol s0 in [1, 8] hint 2
  %full: bool[] = aten.full.default(size=[], fill_value=1, *, dtype=dtype.bool, layout=None, device=None, pin_memory=None)
  %ar: i64[5] = aten.arange.default(end=5, *, dtype=dtype.i64, layout=None, device=None, pin_memory=None)
  %qi: i64[5] = aten.add.Tensor(self=%ar, other=)" +
         q_offset + R"(, *, alpha=1)
  %q0: i64[1, 5] = aten.unsqueeze.default(self=%qi, dim=0)
  %q1: i64[1, 1, 5] = aten.unsqueeze.default(self=%q0, dim=1)
  %q2: i64[1, 1, 5, 1] = aten.unsqueeze.default(self=%q1, dim=3)
  %k0: i64[1, 5] = aten.unsqueeze.default(self=%ar, dim=0)
  %k1: i64[1, 1, 5] = aten.unsqueeze.default(self=%k0, dim=1)
  %k2: i64[1, 1, 1, 5] = aten.unsqueeze.default(self=%k1, dim=2)
  %c: bool[1, 1, 5, 5] = )" +
         compare + R"((self=%k2, other=%q2)
  %and_1: bool[1, 1, 5, 5] = aten.__and__.Tensor(self=%full, other=%c)
  %m: bool[s0, 1, 5, 5] = aten.__and__.Tensor(self=%and_1, other=%pad)
  %y: f32[s0, 2, 5, 8] = aten.scaled_dot_product_attention.default(query=%q, key=%k, value=%v, attn_mask=%m, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False)
  return (%y)
})";
}

/// The attention layer of the network the interpreter makes of `text`, and the name of its mask input (""
/// when it has none).
std::pair<engine::AttentionParams, std::string> attention_of(const std::string& text) {
  auto graph = ir::parse_graph(text);
  settings::CompilationSettings settings;
  InterpreterResult r = Interpreter(*graph, settings).run();
  for (const auto& layer : r.network->layers()) {
    if (layer->kind != engine::LayerKind::Attention) continue;
    const auto& p = layer->get<engine::AttentionParams>();
    return {p, p.has_mask ? r.network->tensor(layer->inputs.at(3))->name() : ""};
  }
  ADD_FAILURE() << "no attention layer";
  return {};
}

TEST(CausalMask, TransformersDecoderMaskBecomesTheCausalFlagAndThePaddingRow) {
  auto [params, mask] = attention_of(decoder_mask_graph());
  EXPECT_TRUE(params.causal);
  EXPECT_EQ(mask, "pad");
}

// kv_idx <= q_idx + 1 (another diagonal), kv_idx < q_idx (strict) and kv_idx >= q_idx (the upper triangle)
// are not the causal mask: the attention reads the whole mask.
TEST(CausalMask, OtherTrianglesKeepTheWholeMask) {
  for (auto [offset, compare] : std::vector<std::pair<std::string, std::string>>{
           {"1", "aten.le.Tensor"}, {"0", "aten.lt.Tensor"}, {"0", "aten.ge.Tensor"}}) {
    SCOPED_TRACE(compare + " offset " + offset);
    auto [params, mask] = attention_of(decoder_mask_graph(offset, compare));
    EXPECT_FALSE(params.causal);
    EXPECT_EQ(mask.substr(0, 2), "m/");  // the AND's output
  }
}

}  // namespace
}  // namespace kiln::conversion
