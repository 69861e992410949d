#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Removing copies does not change values: rtol 1e-5 / atol 1e-6 (fp32 rounding).
TEST(RemoveNoopOps, RemovesCopiesAndIdentityShapes) {
  auto pass = make_remove_noop_ops_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3]) {
  %c: f32[2, 3] = aten.clone.default(self=%x, *, memory_format=None)
  %k: f32[2, 3] = aten.contiguous.default(self=%c, *, memory_format=memory_format.contiguous)
  %t: f32[2, 3] = aten._to_copy.default(self=%k, *, dtype=dtype.f32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %v: f32[2, 3] = aten.reshape.default(self=%t, shape=[2, 3])
  %p: f32[2, 3] = aten.permute.default(self=%v, dims=[0, 1])
  %s: f32[2, 3] = aten.slice.Tensor(self=%p, dim=1, start=0, end=9223372036854775807, step=1)
  %r: f32[2, 3] = aten.relu.default(self=%s)
  return (%r)
})", R"(graph(%x: f32[2, 3]) {
  %r: f32[2, 3] = aten.relu.default(self=%x)
  return (%r)
})");
}

TEST(RemoveNoopOps, KeepsTheCloneOfAnInputReturnedAsOutput) {
  auto pass = make_remove_noop_ops_pass();
  const std::string text = R"(graph(%x: f32[2, 3]) {
  %c: f32[2, 3] = aten.clone.default(self=%x, *, memory_format=None)
  return (%c)
})";
  testing::expect_pass(*pass, text, text);
}

}  // namespace
}  // namespace kiln::lowering
