// The vectorized normalization kernel against the reference.
//
// Tolerance: fp32 allclose(rtol=1e-4, atol=1e-5). The kernel accumulates mean and variance in float with
// 16 partial sums; the reference sums in double. For groups of up to a few thousand O(1) values the float
// sums carry ~1e-6 relative error, far inside the bound.

#include "engine/backends/cpu/kernels/kernel_test_util.h"

namespace kiln::engine::cpu::testing {
namespace {

OneLayer norm_layer(NormalizationParams p, int64_t affine_n, bool scale, bool bias, uint32_t seed) {
  OneLayer l;
  l.layer.name = "norm";
  l.layer.kind = LayerKind::Normalization;
  l.layer.params = p;
  l.layer.weights.push_back(scale ? Weights("s", random_tensor({affine_n}, seed)) : Weights());
  l.layer.weights.push_back(bias ? Weights("b", random_tensor({affine_n}, seed + 1)) : Weights());
  return l;
}

TEST(VecNormalization, LayerNorm) {
  NormalizationParams p;
  p.axis = 2;
  for (bool s : {false, true})
    for (bool b : {false, true}) {
      check_against_reference(norm_layer(p, 37, s, b, 1), "vec", {{2, 5, 37}}, {{{2, 5, 37}}, {{1, 3, 37}}}, 1e-4,
                              1e-5, "layer norm 37");
    }
  check_against_reference(norm_layer(p, 768, true, true, 2), "vec", {{1, 128, 768}}, {{{1, 128, 768}}}, 1e-4, 1e-5,
                          "layer norm 768");
  NormalizationParams two;
  two.axis = 1;
  two.epsilon = 1e-3;
  OneLayer l = norm_layer(two, 1, false, false, 3);
  check_against_reference(l, "vec", {{4, 3, 5}}, {{{4, 3, 5}}}, 1e-4, 1e-5, "layer norm over two dims");
}

TEST(VecNormalization, GroupAndInstanceNorm) {
  NormalizationParams g;
  g.kind = NormalizationParams::Group;
  g.groups = 3;
  check_against_reference(norm_layer(g, 6, true, true, 4), "vec", {{2, 6, 5, 7}}, {{{2, 6, 5, 7}}, {{1, 6, 3, 3}}},
                          1e-4, 1e-5, "group norm");
  NormalizationParams in;
  in.kind = NormalizationParams::Instance;
  check_against_reference(norm_layer(in, 4, true, false, 5), "vec", {{2, 4, 9}}, {{{2, 4, 9}}}, 1e-4, 1e-5,
                          "instance norm 1d");
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
