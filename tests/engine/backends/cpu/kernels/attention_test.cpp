// The vectorized attention kernel against the reference (plain, causal, with a broadcast float mask).
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
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
