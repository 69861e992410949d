#include "kiln/lowering/passes.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Folding computes in double and stores fp32; libtorch computes in fp32: rtol 1e-5, atol 1e-6.
TEST(ConstantFold, FoldsWeightOnlyChains) {
  auto pass = make_constant_fold_pass();
  testing::PassCheck check;
  check.print.constant_values = true;
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3]) {
  %w: f32[3, 2] = parameter("fc.weight", data=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
  %s: f32[] = constant("scale", data=[0.5])
  %t: f32[2, 3] = aten.permute.default(self=%w, dims=[1, 0])
  %m: f32[2, 3] = aten.mul.Tensor(self=%t, other=%s)
  %a: f32[2, 3] = aten.add.Scalar(self=%m, other=1, alpha=1)
  %r: f32[2, 3] = aten.add.Tensor(self=%x, other=%a, *, alpha=1)
  return (%r)
})", R"(graph(%x: f32[2, 3]) {
  %a_folded: f32[2, 3] = constant("a_folded", data=[1.5, 2.5, 3.5, 2.0, 3.0, 4.0])
  %r: f32[2, 3] = aten.add.Tensor(self=%x, other=%a_folded, *, alpha=1)
  return (%r)
})", check);
}

TEST(ConstantFold, RespectsTheSizeCap) {
  auto pass = make_constant_fold_pass();
  testing::PassCheck check;
  check.context.constant_fold_max_bytes = 64;  // the expand result is 100 floats = 400 bytes
  const std::string text = R"(graph(%x: f32[10, 10]) {
  %s: f32[1] = constant("s", data=[2.0])
  %e: f32[10, 10] = aten.expand.default(self=%s, size=[10, 10], *, implicit=False)
  %r: f32[10, 10] = aten.mul.Tensor(self=%x, other=%e)
  return (%r)
})";
  testing::expect_pass(*pass, text, text, check);
}

TEST(ConstantFold, SkipsOpsItCannotCompute) {
  auto pass = make_constant_fold_pass();
  const std::string text = R"(graph(%x: f32[3]) {
  %s: f32[3] = constant("s")
  %e: f32[3] = aten.lgamma.default(self=%s)
  %r: f32[3] = aten.mul.Tensor(self=%x, other=%e)
  return (%r)
})";
  testing::expect_pass(*pass, text, text);
}

}  // namespace
}  // namespace kiln::lowering
