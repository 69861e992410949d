#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// Global adaptive average pooling becomes a keepdim mean over the spatial dims. Both average the same
// 24 or 20 N(0, 1) values in fp32 with their own summation order: rtol 1e-5, atol 1e-6.
TEST(DecomposePooling, GlobalAdaptiveAvgPoolBecomesMean) {
  testing::expect_decomposition(R"(graph(%x: f32[2, 3, 4, 6], %y: f32[2, 3, 20]) {
  %p: f32[2, 3, 1, 1] = aten.adaptive_avg_pool2d.default(self=%x, output_size=[1, 1])
  %q: f32[2, 3, 1] = aten.adaptive_avg_pool1d.default(self=%y, output_size=[1])
  return (%p, %q)
})", R"(graph(%x: f32[2, 3, 4, 6], %y: f32[2, 3, 20]) {
  %mean: f32[2, 3, 1, 1] = aten.mean.dim(self=%x, dim=[2, 3], keepdim=True, *, dtype=None)
  %mean_1: f32[2, 3, 1] = aten.mean.dim(self=%y, dim=[2], keepdim=True, *, dtype=None)
  return (%mean, %mean_1)
})");
}

// Other output sizes are real pooling windows: kept.
TEST(DecomposePooling, KeepsNonGlobalAdaptivePooling) {
  const std::string text = R"(graph(%x: f32[2, 3, 4, 6]) {
  %p: f32[2, 3, 2, 3] = aten.adaptive_avg_pool2d.default(self=%x, output_size=[2, 3])
  return (%p)
})";
  testing::expect_decomposition(text, text);
}

}  // namespace
}  // namespace kiln::lowering
