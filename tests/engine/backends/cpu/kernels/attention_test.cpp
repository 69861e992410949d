// The vectorized attention kernel against the reference (plain, causal, with a broadcast float mask, strided
// operand and output views).
//
// Tolerance: fp32 allclose(rtol=1e-4, atol=1e-5): float dot products split into partial sums and a polynomial exp
// against the reference's double arithmetic.

#include "engine/backends/cpu/kernels/kernel_test_util.h"

namespace kiln::engine::cpu::testing {
namespace {

OneLayer attention_layer(bool causal, bool mask, double scale) {
  OneLayer l;
  l.layer.name = "attention";
  l.layer.kind = LayerKind::Attention;
  AttentionParams p;
  p.causal = causal;
  p.has_mask = mask;
  p.scale = scale;
  l.layer.params = p;
  return l;
}

TEST(VecAttention, PlainCausalAndMasked) {
  const std::vector<Dims> dims = {{2, 3, 5, 16}, {2, 3, 7, 16}, {2, 3, 7, 8}};
  check_against_reference(attention_layer(false, false, 0.0), "vec", dims, {dims, {{1, 2, 9, 16}, {1, 2, 4, 16}, {1, 2, 4, 3}}},
                          1e-4, 1e-5, "plain");
  const std::vector<Dims> square = {{1, 4, 6, 32}, {1, 4, 6, 32}, {1, 4, 6, 32}};
  check_against_reference(attention_layer(true, false, 0.3), "vec", square, {square}, 1e-4, 1e-5, "causal");
  std::vector<Dims> masked = dims;
  masked.push_back({5, 7});
  check_against_reference(attention_layer(false, true, 0.0), "vec", masked, {masked}, 1e-4, 1e-5, "float mask");
  // Masks broadcast other ways: per batch over heads and queries (BERT's [B, 1, 1, Lk]), over keys ([B, H, Lq, 1]),
  // and full ([B, H, Lq, Lk]); the kernel walks each mask row with its own start and key step.
  for (Dims mask : {Dims{2, 1, 1, 7}, Dims{2, 3, 5, 1}, Dims{2, 3, 5, 7}, Dims{3, 1, 7}}) {
    masked.back() = mask;
    std::string what = "float mask of rank " + std::to_string(mask.size()) + " ending in " + std::to_string(mask.back());
    check_against_reference(attention_layer(false, true, 0.0), "vec", masked, {masked}, 1e-4, 1e-5, what);
  }
}

TEST(VecAttention, RowsLongerThanTheVectorLanes) {
  // 37 keys: 16-lane passes of the row max and exp-sum plus a tail; 70 queries: the sgemm path's blocks of 64
  // queries and a short last block. Scale 60 spreads the scores over about +-150, so exp overflows (and the
  // rows come out NaN) unless the softmax subtracts each row's true max.
  const std::vector<Dims> dims = {{1, 2, 70, 16}, {1, 2, 37, 16}, {1, 2, 37, 8}};
  check_against_reference(attention_layer(false, false, 0.0), "vec", dims, {dims}, 1e-4, 1e-5, "plain, 37 keys");
  check_against_reference(attention_layer(false, false, 60.0), "vec", dims, {dims}, 1e-4, 1e-5, "scale 60, 37 keys");
  std::vector<Dims> masked = dims;
  masked.push_back({1, 1, 1, 37});
  check_against_reference(attention_layer(false, true, 0.0), "vec", masked, {masked}, 1e-4, 1e-5, "masked, 37 keys");
  const std::vector<Dims> square = {{1, 2, 70, 16}, {1, 2, 70, 16}, {1, 2, 70, 16}};
  check_against_reference(attention_layer(true, false, 0.0), "vec", square, {square}, 1e-4, 1e-5, "causal, 70 keys");
}

AttentionView strided(Dims dims, std::vector<int64_t> strides, int64_t offset) {
  AttentionView v;
  v.dims = std::move(dims);
  v.strides = std::move(strides);
  v.offset = offset;
  return v;
}

TEST(VecAttention, StridedViews) {
  // ViT-like: q/k/v [B=2, H=3, L=5, D=8] at offsets 0, 24, 48 (+1: unaligned rows) of one [L, B, 73] buffer,
  // the output written [L, B, H, D] through a view.
  OneLayer l = attention_layer(false, false, 0.0);
  auto& p = std::get<AttentionParams>(l.layer.params);
  for (int i = 0; i < 3; ++i) p.view(i) = strided({2, 3, 5, 8}, {73, 8, 146, 1}, 24 * i + 1);
  p.out_view = strided({2, 3, 5, 8}, {24, 8, 48, 1}, 0);
  p.out_dims = {5, 2, 3, 8};
  const std::vector<Dims> dims = {{5, 2, 73}, {5, 2, 73}, {5, 2, 73}};
  check_against_reference(l, "vec", dims, {dims}, 1e-4, 1e-5, "views");
  // A view for q only, dense k and v, a float mask and causal.
  OneLayer m = attention_layer(true, true, 0.0);
  std::get<AttentionParams>(m.layer.params).q_view = strided({2, 3, 5, 8}, {120, 8, 24, 1}, 0);
  const std::vector<Dims> mixed = {{2, 5, 24}, {2, 3, 6, 8}, {2, 3, 6, 8}, {5, 6}};
  check_against_reference(m, "vec", mixed, {mixed}, 1e-4, 1e-5, "q view, causal, mask");
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
