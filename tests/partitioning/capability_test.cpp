// Capability queries: is_node_supported reasons and graph coverage counts.

#include "kiln/partitioning/capability.h"

#include <gtest/gtest.h>

#include "kiln/ir/higher_order.h"
#include "partitioning/test_graphs.h"

namespace kiln::partitioning {
namespace {

using testing::parse;
using testing::register_stubs;

const char* kCapabilityGraph = R"(graph(%x: f32[2, 3], %d: f32[s0, 3]) {
  symbol s0 in [1, 64] hint 2
  %r: f32[2, 3] = aten.relu.default(self=%x)
  %l: f32[2, 3] = aten.special_airy_ai.default(x=%r)
  %g: f32[2, 3] = aten.gelu.default(self=%l, approximate="none")
  %rd: f32[s0, 3] = aten.relu.default(self=%d)
  %a: f32[2, 3] = aten.add_.Tensor(self=%g, other=%x, alpha=1)
  %sz: sym_int = aten.sym_size.int(self=%d, dim=0)
  node assert_0: = aten._assert_scalar.default(self=%sz, assert_msg="x")
  return (%a, %rd)
}
)";

TEST(Capability, ReasonsForEveryKindOfMiss) {
  auto g = parse(kCapabilityGraph);
  conversion::ConverterRegistry reg;
  register_stubs(reg, {"aten.relu.default", "aten.add_.Tensor", "aten._assert_scalar.default"});
  conversion::RegistrationOptions o;
  o.capability_validator = [](const ir::Node& n, const settings::CompilationSettings&) {
    return n.arg("approximate").as_string() == "tanh";
  };
  reg.register_converter("aten.gelu.default", testing::stub_converter(), o);
  settings::CompilationSettings s;
  EXPECT_TRUE(is_node_supported(*g->find_node("r"), s, reg).supported);
  NodeSupport l = is_node_supported(*g->find_node("l"), s, reg);
  EXPECT_EQ(l.status, SupportStatus::NoConverter);
  EXPECT_NE(l.reason.find("aten.special_airy_ai.default"), std::string::npos);
  EXPECT_EQ(is_node_supported(*g->find_node("g"), s, reg).status, SupportStatus::ValidatorRejected);
  EXPECT_EQ(is_node_supported(*g->find_node("rd"), s, reg).status, SupportStatus::DynamicShapes);
  EXPECT_EQ(is_node_supported(*g->find_node("a"), s, reg).status, SupportStatus::Impure);
  EXPECT_EQ(is_node_supported(*g->find_node("assert_0"), s, reg).status, SupportStatus::Impure);
  // sym_size is supported only when a converter is registered for it.
  EXPECT_EQ(is_node_supported(*g->find_node("sz"), s, reg).status, SupportStatus::NoConverter);
  s.torch_executed_ops = {"aten.relu"};
  EXPECT_EQ(is_node_supported(*g->find_node("r"), s, reg).status, SupportStatus::TorchExecuted);
}

TEST(Capability, HigherOrderOpsUnreadableArgumentsAndAutocastOffRegionsStayInPyTorch) {
  auto g = parse(R"(graph(%p: bool[], %x: f32[2, 3]) {
  %c: f32[2, 3] = higher_order.cond.default(arg0=%p, arg1=graph(%a: f32[2, 3]) {
    return (%a)
  }, arg2=graph(%b: f32[2, 3]) {
    return (%b)
  }, arg3=[%x])
  %r: f32[2, 3] = aten.relu.default(self=%c)
  %t: f32[2, 3] = aten.relu.default(self=%r)
  return (%t)
}
)");
  conversion::ConverterRegistry reg;
  register_stubs(reg, {"aten.relu.default", "higher_order.cond.default"});
  settings::CompilationSettings s;
  // A converter registered under the name changes nothing: the nested graphs cannot go into an engine.
  NodeSupport cond = is_node_supported(*g->find_node("c"), s, reg);
  EXPECT_EQ(cond.status, SupportStatus::HigherOrder);
  EXPECT_NE(cond.reason.find("higher-order"), std::string::npos);
  g->find_node("r")->mutable_metadata()[ir::kUnsupportedArgumentKey] = "argument 'fn' of kind 'as_operator'";
  NodeSupport odd = is_node_supported(*g->find_node("r"), s, reg);
  EXPECT_EQ(odd.status, SupportStatus::UnsupportedArgument);
  EXPECT_NE(odd.reason.find("as_operator"), std::string::npos);
  // An autocast-disabled region keeps its dtype: in PyTorch when engines may lower precision, in engines otherwise.
  g->find_node("t")->mutable_metadata()[ir::kAutocastKey] = "cuda:disabled";
  EXPECT_TRUE(is_node_supported(*g->find_node("t"), s, reg).supported);
  s.enabled_precisions = {settings::Precision::F32, settings::Precision::F16};
  EXPECT_EQ(is_node_supported(*g->find_node("t"), s, reg).status, SupportStatus::PrecisionConstraint);
  g->find_node("t")->mutable_metadata()[ir::kAutocastKey] = "cuda:float16";
  EXPECT_TRUE(is_node_supported(*g->find_node("t"), s, reg).supported);
}

TEST(Capability, GraphCoverageCountsAndPerOpBreakdown) {
  auto g = parse(kCapabilityGraph);
  conversion::ConverterRegistry reg;
  register_stubs(reg, {"aten.relu.default"});
  // sym_size always sees a dynamic input, so its converter must declare dynamic-shape support.
  conversion::RegistrationOptions dynamic;
  dynamic.supports_dynamic_shapes = true;
  reg.register_converter("aten.sym_size.int", testing::stub_converter(), dynamic);
  settings::CompilationSettings s;
  GraphSupport cov = get_graph_converter_support(*g, s, reg);
  EXPECT_EQ(cov.total, 7);
  EXPECT_EQ(cov.supported, 2);  // relu (static) and sym_size; the dynamic relu is not
  EXPECT_EQ(cov.per_op["aten.relu.default"].supported, 1);
  EXPECT_EQ(cov.per_op["aten.relu.default"].unsupported, 1);
  ASSERT_EQ(cov.unsupported.size(), 5u);
  EXPECT_EQ(cov.unsupported[0].node, "l");
  EXPECT_NE(cov.to_string().find("2/7 ops supported"), std::string::npos) << cov.to_string();
  s.assume_dynamic_shape_support = true;
  EXPECT_EQ(get_graph_converter_support(*g, s, reg).supported, 3);
}

TEST(Capability, ImpureOps) {
  EXPECT_TRUE(is_impure_op(ir::OpName{"aten", "add_", "Tensor"}));
  EXPECT_TRUE(is_impure_op(ir::OpName{"aten", "add", "out"}));
  EXPECT_TRUE(is_impure_op(ir::OpName{"aten", "_assert_async", "msg"}));
  EXPECT_FALSE(is_impure_op(ir::OpName{"aten", "add", "Tensor"}));
  EXPECT_FALSE(is_impure_op(ir::OpName{"aten", "__and__", "Tensor"}));
  EXPECT_FALSE(is_impure_op(ir::OpName{"_operator", "getitem", ""}));
}

}  // namespace
}  // namespace kiln::partitioning
