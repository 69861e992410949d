// The vectorized softmax kernel against the reference.
//
// Tolerance: fp32 allclose(rtol=1e-4, atol=1e-5): the kernel's polynomial exp is within a few ulp and its
// float sums are split into 16 partial sums; the reference works in double.

#include "engine/backends/cpu/kernels/kernel_test_util.h"

namespace kiln::engine::cpu::testing {
namespace {

OneLayer softmax_layer(int64_t axis, bool log) {
  OneLayer l;
  l.layer.name = "softmax";
  l.layer.kind = LayerKind::Softmax;
  l.layer.params = SoftmaxParams{axis, log};
  return l;
}

TEST(VecSoftmax, LastAxisAndInnerAxes) {
  for (bool log : {false, true}) {
    std::string what = log ? "log-softmax" : "softmax";
    check_against_reference(softmax_layer(2, log), "vec", {{2, 3, 37}}, {{{2, 3, 37}}, {{1, 4, 128}}, {{3, 1, 5}}},
                            1e-4, 1e-5, what + " last axis");
    check_against_reference(softmax_layer(1, log), "vec", {{2, 7, 19}}, {{{2, 7, 19}}, {{1, 33, 3}}}, 1e-4, 1e-5,
                            what + " middle axis");
    check_against_reference(softmax_layer(0, log), "vec", {{9, 4}}, {{{9, 4}}}, 1e-4, 1e-5, what + " first axis");
  }
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
