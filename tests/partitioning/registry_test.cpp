// The converter registry: registration rules, lookup order, priorities, validators and dynamic shapes.

#include "kiln/conversion/registry.h"

#include <gtest/gtest.h>

#include "kiln/support/error.h"
#include "partitioning/test_graphs.h"

namespace kiln::conversion {
namespace {

using partitioning::testing::parse;
using partitioning::testing::stub_converter;

const char* kGraph = R"(graph(%x: f32[2, 3], %d: f32[s0, 3]) {
  symbol s0 in [1, 64] hint 2
  %g: f32[2, 3] = aten.gelu.default(self=%x, approximate="tanh")
  %g2: f32[2, 3] = aten.gelu.default(self=%x, approximate="none")
  %gd: f32[s0, 3] = aten.gelu.default(self=%d, approximate="tanh")
  %a: f32[2, 3] = aten.add.Tensor(self=%x, other=%g, alpha=1)
  %ad: f32[s0, 3] = aten.add.Tensor(self=%d, other=%gd, alpha=1)
  return (%a, %g2, %ad)
}
)";

RegistrationOptions tagged(const std::string& tag, Priority priority = Priority::Standard,
                           CapabilityValidator validator = {}, bool dynamic = false) {
  RegistrationOptions o;
  o.registry_name = tag;
  o.priority = priority;
  o.capability_validator = std::move(validator);
  o.supports_dynamic_shapes = dynamic;
  return o;
}

bool approximate_is_tanh(const ir::Node& node, const settings::CompilationSettings&) {
  return node.arg("approximate").as_string() == "tanh";
}

TEST(ConverterRegistry, HighPriorityWithValidatorShadowsOnlyWhereItPasses) {
  auto g = parse(kGraph);
  ConverterRegistry r;
  r.register_converter("aten.gelu.default", stub_converter(), tagged("builtin"));
  r.register_converter("torch.ops.aten.gelu.default", stub_converter(),
                       tagged("fast_gelu", Priority::High, approximate_is_tanh));
  settings::CompilationSettings s;
  ASSERT_EQ(r.get_all_converters_with_target(g->find_node("g")->target()).size(), 2u);
  EXPECT_EQ(r.get_all_converters_with_target(g->find_node("g")->target())[0].registry_name, "fast_gelu");
  EXPECT_EQ(r.at(*g->find_node("g"), s).registry_name, "fast_gelu");
  EXPECT_EQ(r.at(*g->find_node("g"), s).candidate_index, 0u);
  EXPECT_EQ(r.at(*g->find_node("g2"), s).registry_name, "builtin");
  EXPECT_EQ(r.at(*g->find_node("g2"), s).candidate_index, 1u);
}

TEST(ConverterRegistry, StandardRegistrationsKeepOrder) {
  auto g = parse(kGraph);
  ConverterRegistry r;
  r.register_converter("aten.add.Tensor", stub_converter(), tagged("first"));
  r.register_converter("aten.add.Tensor", stub_converter(), tagged("second"));
  EXPECT_EQ(r.at(*g->find_node("a"), {}).registry_name, "first");
  auto info = r.get_converter_support_info();
  EXPECT_EQ(info["aten.add.Tensor"]["first"], 1);
  EXPECT_EQ(info["aten.add.Tensor"]["second"], 1);
}

TEST(ConverterRegistry, DisabledRegistrationIsANoOp) {
  ConverterRegistry r;
  RegistrationOptions o;
  o.enabled = false;
  r.register_converter("aten.relu.default", stub_converter(), o);
  EXPECT_EQ(r.size(), 0u);
  EXPECT_FALSE(r.contains(ir::OpName{"aten", "relu", "default"}));
}

TEST(ConverterRegistry, PacketKeysAreRejected) {
  ConverterRegistry r;
  try {
    r.register_converter("aten.add", stub_converter());
    FAIL() << "packet key accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("aten.add"), std::string::npos) << e.what();
  }
  // With the schema table's answer: several overloads are an error naming them, default(+out) is accepted.
  r.set_overload_resolver([](const std::string& packet) -> std::optional<std::vector<std::string>> {
    if (packet == "aten.add") return std::vector<std::string>{"Tensor", "Scalar", "out"};
    if (packet == "aten.relu") return std::vector<std::string>{"default", "out"};
    return std::nullopt;
  });
  try {
    r.register_converter("torch.ops.aten.add", stub_converter());
    FAIL() << "packet with several overloads accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor, Scalar, out"), std::string::npos) << e.what();
  }
  r.register_converter("aten.relu", stub_converter());
  EXPECT_TRUE(r.contains(ir::OpName{"aten", "relu", "default"}));
  EXPECT_THROW(r.register_converter("relu", stub_converter()), Error);
  EXPECT_THROW(r.register_converter("aten..default", stub_converter()), Error);
  // Python operators have no overloads.
  r.register_converter("operator.getitem", stub_converter());
  EXPECT_TRUE(r.contains(ir::OpName{"_operator", "getitem", ""}));
}

TEST(ConverterRegistry, DynamicShapeRouting) {
  auto g = parse(kGraph);
  ConverterRegistry r;
  r.register_converter("aten.gelu.default", stub_converter(), tagged("static_only"));
  const ir::Node& dyn = *g->find_node("gd");
  settings::CompilationSettings s;
  LookupResult miss = r.lookup(dyn, s);
  EXPECT_FALSE(miss.match);
  EXPECT_EQ(miss.miss, LookupMiss::DynamicShapes);
  EXPECT_TRUE(r.contains(*g->find_node("g"), s));
  s.assume_dynamic_shape_support = true;
  EXPECT_TRUE(r.contains(dyn, s));
  // A later converter that supports dynamic shapes wins for the dynamic node only.
  r.register_converter("aten.gelu.default", stub_converter(), tagged("dynamic", Priority::Standard, {}, true));
  s.assume_dynamic_shape_support = false;
  EXPECT_EQ(r.at(dyn, s).registry_name, "dynamic");
  EXPECT_TRUE(r.at(dyn, s).flags.supports_dynamic_shapes);
  EXPECT_EQ(r.at(*g->find_node("g"), s).registry_name, "static_only");
}

TEST(ConverterRegistry, ValidatorHelpers) {
  auto g = parse(kGraph);
  settings::CompilationSettings s;
  EXPECT_TRUE(has_dynamic_shapes(*g->find_node("ad")));
  EXPECT_FALSE(has_dynamic_shapes(*g->find_node("a")));
  EXPECT_TRUE(has_dynamic_shapes_in_args({0})(*g->find_node("ad"), s));
  EXPECT_FALSE(has_dynamic_shapes_in_args({0})(*g->find_node("a"), s));
  EXPECT_FALSE(has_static_shapes_in_args({0, 1})(*g->find_node("ad"), s));
  EXPECT_TRUE(has_static_shapes_in_args({0, 1})(*g->find_node("a"), s));
  EXPECT_TRUE(has_static_shapes_in_args({7})(*g->find_node("ad"), s));  // out of range: ignored
  s.assume_dynamic_shape_support = true;
  EXPECT_TRUE(has_static_shapes_in_args({0})(*g->find_node("ad"), s));
}

TEST(ConverterRegistry, DisallowedTargetsMissAndInspection) {
  auto g = parse(kGraph);
  ConverterRegistry r;
  r.register_converter("aten.add.Tensor", stub_converter(), tagged("t"));
  r.register_converter("aten.gelu.default", stub_converter(), tagged("t", Priority::High, approximate_is_tanh));
  settings::CompilationSettings s;
  s.torch_executed_ops = {"aten.add"};
  LookupResult res = r.lookup(*g->find_node("a"), s);
  EXPECT_EQ(res.miss, LookupMiss::Disallowed);
  EXPECT_TRUE(r.contains(g->find_node("a")->target()));  // unvalidated check ignores settings
  s.torch_executed_ops = {"torch.ops.aten.add.Tensor"};
  EXPECT_FALSE(r.get(*g->find_node("a"), s));
  s.torch_executed_ops = {"aten::add.Scalar"};
  EXPECT_TRUE(r.get(*g->find_node("a"), s));
  LookupResult rejected = r.lookup(*g->find_node("g2"), s);
  EXPECT_EQ(rejected.miss, LookupMiss::ValidatorRejected);
  EXPECT_THROW(r.at(*g->find_node("g2"), s), Error);
  auto targets = r.unique_targets();
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].to_string(), "aten.add.Tensor");
  std::string table = r.display_all_available_converters();
  EXPECT_NE(table.find("aten.gelu.default"), std::string::npos);
  EXPECT_NE(table.find("2 targets, 2 converters"), std::string::npos) << table;
}

}  // namespace
}  // namespace kiln::conversion
