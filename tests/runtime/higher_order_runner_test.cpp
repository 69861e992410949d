// Higher-order ops in the torch executor: cond, while_loop, map_impl and invoke_subgraph run their nested
// graphs (written as IR text, as the frontend loads them from .pt2 archives) and give what the control flow
// computes, checked against the same arithmetic done directly in ATen.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "kiln/ir/higher_order.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/runtime/torch_executor.h"
#include "kiln/support/error.h"

namespace kiln::runtime {
namespace {

std::vector<c10::IValue> run(const std::string& text, std::vector<c10::IValue> inputs) {
  std::unique_ptr<ir::Graph> graph = ir::parse_graph(text);
  ir::verify(*graph);
  TorchExecutor executor(*graph);
  return executor.run(inputs);
}

const char* kCond = R"(graph(%p: bool[], %x: f32[2, 3]) {
  %out: f32[2, 3] = higher_order.cond.default(arg0=%p, arg1=graph(%a: f32[2, 3]) {
    %r: f32[2, 3] = aten.relu.default(self=%a)
    return (%r)
  }, arg2=graph(%b: f32[2, 3]) {
    %n: f32[2, 3] = aten.neg.default(self=%b)
    return (%n)
  }, arg3=[%x])
  return (%out)
}
)";

TEST(HigherOrderRunner, CondRunsTheBranchThePredicateChooses) {
  at::Tensor x = at::randn({2, 3});
  at::Tensor on_true = run(kCond, {at::scalar_tensor(true, at::kBool), x})[0].toTensor();
  at::Tensor on_false = run(kCond, {at::scalar_tensor(false, at::kBool), x})[0].toTensor();
  EXPECT_TRUE(at::equal(on_true, at::relu(x)));
  EXPECT_TRUE(at::equal(on_false, at::neg(x)));
}

TEST(HigherOrderRunner, WhileLoopCarriesValuesUntilTheConditionFails) {
  // while i < n: i, y = i + 1, y * 2 + x   (x is an additional input)
  const char* text = R"(graph(%i0: i64[], %y0: f32[4], %n: i64[], %x: f32[4]) {
  %i: i64[], %y: f32[4] = higher_order.while_loop.default(arg0=graph(%ci: i64[], %cy: f32[4], %cn: i64[], %cx: f32[4]) {
    %c: bool[] = aten.lt.Tensor(self=%ci, other=%cn)
    return (%c)
  }, arg1=graph(%bi: i64[], %by: f32[4], %bn: i64[], %bx: f32[4]) {
    %next: i64[] = aten.add.Scalar(self=%bi, other=1)
    %twice: f32[4] = aten.mul.Scalar(self=%by, other=2.0)
    %sum: f32[4] = aten.add.Tensor(self=%twice, other=%bx)
    return (%next, %sum)
  }, arg2=[%i0, %y0], arg3=[%n, %x])
  return (%i, %y)
}
)";
  at::Tensor y0 = at::randn({4}), x = at::randn({4});
  std::vector<c10::IValue> out =
      run(text, {at::scalar_tensor(0, at::kLong), y0, at::scalar_tensor(3, at::kLong), x});
  at::Tensor expected = y0;
  for (int k = 0; k < 3; ++k) expected = expected * 2 + x;
  EXPECT_EQ(out[0].toTensor().item<int64_t>(), 3);
  EXPECT_TRUE(at::allclose(out[1].toTensor(), expected));
}

TEST(HigherOrderRunner, MapRunsTheBodyOnEachSliceAndStacks) {
  const char* text = R"(graph(%xs: f32[3, 4], %w: f32[4]) {
  %out: f32[3, 4] = higher_order.map_impl.default(arg0=graph(%x: f32[4], %v: f32[4]) {
    %m: f32[4] = aten.mul.Tensor(self=%x, other=%v)
    %t: f32[4] = aten.tanh.default(self=%m)
    return (%t)
  }, arg1=[%xs], arg2=[%w])
  return (%out)
}
)";
  at::Tensor xs = at::randn({3, 4}), w = at::randn({4});
  at::Tensor out = run(text, {xs, w})[0].toTensor();
  EXPECT_TRUE(at::allclose(out, at::tanh(xs * w)));
}

TEST(HigherOrderRunner, InvokeSubgraphSkipsItsIdentifier) {
  const char* text = R"(graph(%x: f32[5]) {
  %out: f32[5] = higher_order.invoke_subgraph.default(arg0=graph(%a: f32[5]) {
    %s: f32[5] = aten.sigmoid.default(self=%a)
    return (%s)
  }, arg1="subgraph_0", arg2=%x)
  return (%out)
}
)";
  at::Tensor x = at::randn({5});
  EXPECT_TRUE(at::equal(run(text, {x})[0].toTensor(), at::sigmoid(x)));
}

TEST(HigherOrderRunner, UnknownHigherOrderOpsAndUnreadableArgumentsFailWithTheirReason) {
  auto graph = ir::parse_graph(R"(graph(%x: f32[5]) {
  %out: f32[5] = higher_order.scan.default(arg0=graph(%a: f32[5]) {
    return (%a)
  }, arg1=%x)
  return (%out)
}
)");
  try {
    TorchExecutor executor(*graph);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("higher_order.scan.default"), std::string::npos) << e.what();
  }
  auto odd =
      ir::parse_graph("graph(%x: f32[5]) {\n  %y: f32[5] = aten.relu.default(self=%x)\n  return (%y)\n}\n");
  odd->find_node("y")->mutable_metadata()[ir::kUnsupportedArgumentKey] =
      "argument 'fn' of kind 'as_operator'";
  try {
    TorchExecutor executor(*odd);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("as_operator"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::runtime
