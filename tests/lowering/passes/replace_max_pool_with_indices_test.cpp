#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Same pooling kernel without indices: exact (rtol 1e-5, atol 1e-6).
TEST(ReplaceMaxPoolWithIndices, DropsUnusedIndices) {
  auto pass = make_replace_max_pool_with_indices_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[1, 2, 6, 6]) {
  %p: f32[1, 2, 3, 3], %i: i64[1, 2, 3, 3] = aten.max_pool2d_with_indices.default(self=%x, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[1, 1], ceil_mode=False)
  return (%p)
})", R"(graph(%x: f32[1, 2, 6, 6]) {
  %max_pool2d: f32[1, 2, 3, 3] = aten.max_pool2d.default(self=%x, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[1, 1], ceil_mode=False)
  return (%max_pool2d)
})");
}

TEST(ReplaceMaxPoolWithIndices, KeepsUsedIndices) {
  auto pass = make_replace_max_pool_with_indices_pass();
  const std::string text = R"(graph(%x: f32[1, 2, 6, 6]) {
  %p: f32[1, 2, 3, 3], %i: i64[1, 2, 3, 3] = aten.max_pool2d_with_indices.default(self=%x, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[1, 1], ceil_mode=False)
  return (%p, %i)
})";
  testing::expect_pass(*pass, text, text);
}

}  // namespace
}  // namespace kiln::lowering
