#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Zero padding inside or outside the convolution sums the same products: rtol 1e-5, atol 1e-5 (outputs
// are sums of 27 O(1) products).
TEST(FusePadIntoConvolution, MovesSymmetricZeroPad) {
  auto pass = make_fuse_pad_into_convolution_pass();
  testing::PassCheck check;
  check.atol = 1e-5;
  testing::expect_pass(*pass, R"(graph(%x: f32[1, 3, 6, 6]) {
  %w: f32[2, 3, 3, 3] = parameter("conv.weight")
  %p: f32[1, 3, 8, 10] = aten.constant_pad_nd.default(self=%x, pad=[2, 2, 1, 1], value=0)
  %c: f32[1, 2, 8, 8] = aten.convolution.default(input=%p, weight=%w, bias=None, stride=[1, 1], padding=[1, 0], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  return (%c)
})", R"(graph(%x: f32[1, 3, 6, 6]) {
  %w: f32[2, 3, 3, 3] = parameter("conv.weight")
  %c: f32[1, 2, 8, 8] = aten.convolution.default(input=%x, weight=%w, bias=None, stride=[1, 1], padding=[2, 2], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  return (%c)
})", check);
}

TEST(FusePadIntoConvolution, KeepsAsymmetricPad) {
  auto pass = make_fuse_pad_into_convolution_pass();
  const std::string text = R"(graph(%x: f32[1, 3, 6, 6]) {
  %w: f32[2, 3, 3, 3] = parameter("conv.weight")
  %p: f32[1, 3, 6, 7] = aten.constant_pad_nd.default(self=%x, pad=[0, 1], value=0)
  %c: f32[1, 2, 4, 5] = aten.convolution.default(input=%p, weight=%w, bias=None, stride=[1, 1], padding=[0, 0], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)
  return (%c)
})";
  testing::expect_pass(*pass, text, text);
}

}  // namespace
}  // namespace kiln::lowering
