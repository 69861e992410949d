#include "kiln/lowering/passes.h"
#include "kiln/support/error.h"
#include "lowering/lowering_test_util.h"

namespace kiln::lowering {
namespace {

// Running `pass` on `g` fails with kiln::Error(Unsupported) whose message contains `fragment`.
void expect_unsupported(Pass& pass, ir::Graph& g, const std::string& fragment) {
  try {
    pass.run(g, {});
    FAIL() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// Elementwise ops in the same order: outputs match to fp32 rounding (rtol 1e-5, atol 1e-6).
TEST(FunctionalizeInplace, RewritesInplaceOpsAndLaterReaders) {
  auto pass = make_functionalize_inplace_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3], %y: f32[2, 3]) {
  %m: f32[2, 3] = aten.mul.Tensor(self=%x, other=%y)
  %a: f32[2, 3] = aten.add_.Tensor(self=%m, other=%y, *, alpha=1)
  %r: f32[2, 3] = aten.relu_.default(self=%m)
  %s: f32[2, 3] = aten.sub.Tensor(self=%m, other=%a, *, alpha=1)
  return (%s, %m)
})", R"(graph(%x: f32[2, 3], %y: f32[2, 3]) {
  %m: f32[2, 3] = aten.mul.Tensor(self=%x, other=%y)
  %add: f32[2, 3] = aten.add.Tensor(self=%m, other=%y, *, alpha=1)
  %relu: f32[2, 3] = aten.relu.default(self=%add)
  %s: f32[2, 3] = aten.sub.Tensor(self=%relu, other=%relu, *, alpha=1)
  return (%s, %relu)
})");
}

TEST(FunctionalizeInplace, CopyBecomesCastAndExpand) {
  auto pass = make_functionalize_inplace_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 3], %y: i64[3]) {
  %m: f32[2, 3] = aten.neg.default(self=%x)
  %c: f32[2, 3] = aten.copy_.default(self=%m, src=%y, non_blocking=False)
  %r: f32[2, 3] = aten.add.Tensor(self=%m, other=%x, *, alpha=1)
  return (%r)
})", R"(graph(%x: f32[2, 3], %y: i64[3]) {
  %m: f32[2, 3] = aten.neg.default(self=%x)
  %_to_copy: f32[3] = aten._to_copy.default(self=%y, *, dtype=dtype.f32, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
  %expand: f32[2, 3] = aten.expand.default(self=%_to_copy, size=[2, 3], *, implicit=False)
  %r: f32[2, 3] = aten.add.Tensor(self=%expand, other=%x, *, alpha=1)
  return (%r)
})");
}

// A mutation through slices of a fresh tensor read afterwards (`mask[:, 1:3] = 5`, as swin_t builds its attention
// mask) is written back with slice_scatter. Exact (data movement and a constant).
TEST(FunctionalizeInplace, WritesBackThroughSlicesIntoTheBase) {
  auto pass = make_functionalize_inplace_pass();
  testing::expect_pass(*pass, R"(graph(%x: f32[2, 4]) {
  %z: f32[2, 4] = aten.mul.Tensor(self=%x, other=%x)
  %s: f32[2, 2] = aten.slice.Tensor(self=%z, dim=1, start=1, end=3, step=1)
  %f: f32[2, 2] = aten.fill_.Scalar(self=%s, value=5.0)
  %r: f32[2, 4] = aten.add.Tensor(self=%z, other=%x, *, alpha=1)
  return (%r)
})", R"(graph(%x: f32[2, 4]) {
  %z: f32[2, 4] = aten.mul.Tensor(self=%x, other=%x)
  %s: f32[2, 2] = aten.slice.Tensor(self=%z, dim=1, start=1, end=3, step=1)
  %fill: f32[2, 2] = aten.fill.Scalar(self=%s, value=5.0)
  %slice_scatter: f32[2, 4] = aten.slice_scatter.default(self=%z, src=%fill, dim=1, start=1, end=3, step=1)
  %r: f32[2, 4] = aten.add.Tensor(self=%slice_scatter, other=%x, *, alpha=1)
  return (%r)
})");
}

// dropout_ keeps the in-place overload's `self` name in the export; its functional form names it `input`.
TEST(FunctionalizeInplace, FunctionalFormTakesItsOwnArgumentNames) {
  auto pass = make_functionalize_inplace_pass();
  auto g = ir::parse_graph(R"(graph(%x: f32[2, 4]) {
  %z: f32[2, 4] = aten.relu.default(self=%x)
  %d: f32[2, 4] = aten.dropout_.default(self=%z, p=0.2, train=False)
  return (%d)
})");
  pass->run(*g, {});
  const ir::Node* dropout = g->outputs()[0]->producer();
  ASSERT_NE(dropout, nullptr);
  EXPECT_EQ(dropout->target().to_string(), "aten.dropout.default");
  EXPECT_NE(dropout->find_arg("input"), nullptr) << ir::print_graph(*g);
}

TEST(FunctionalizeInplace, AnotherViewReadAfterTheMutationFailsClearly) {
  auto pass = make_functionalize_inplace_pass();
  auto g = ir::parse_graph(R"(graph(%x: f32[2, 4]) {
  %z: f32[2, 4] = aten.mul.Tensor(self=%x, other=%x)
  %a: f32[2, 2] = aten.slice.Tensor(self=%z, dim=1, start=0, end=2, step=1)
  %s: f32[2, 2] = aten.slice.Tensor(self=%z, dim=1, start=1, end=3, step=1)
  %f: f32[2, 2] = aten.fill_.Scalar(self=%s, value=5.0)
  %r: f32[2, 2] = aten.neg.default(self=%a)
  return (%r)
})");
  expect_unsupported(*pass, *g, "'a' is a view read afterwards");
}

TEST(FunctionalizeInplace, MutatingAGraphInputFailsClearly) {
  auto pass = make_functionalize_inplace_pass();
  auto g = ir::parse_graph(R"(graph(%x: f32[2, 3]) {
  %a: f32[2, 3] = aten.relu_.default(self=%x)
  return (%a)
})");
  expect_unsupported(*pass, *g, "graph input 'x'");
}

}  // namespace
}  // namespace kiln::lowering
