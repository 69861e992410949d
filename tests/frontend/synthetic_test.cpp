// Loader behavior on hand-edited archives: every serialized argument kind, list and None outputs, range
// bounds, non-persistent buffers and tensor constants from the constants config, higher-order ops (nested
// graphs, inlined wrappers) and argument kinds Kiln cannot represent.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "frontend/archive_edit.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/higher_order.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/error.h"

namespace kiln::frontend {
namespace {

using nlohmann::json;
using testing::ArchiveEntries;
using testing::fixture_path;

json tensor_meta(std::vector<int64_t> sizes) {
  json m = {{"dtype", 7}, {"requires_grad", false}, {"device", {{"type", "cpu"}, {"index", nullptr}}},
            {"storage_offset", {{"as_int", 0}}}, {"layout", 7}};
  m["sizes"] = json::array();
  m["strides"] = json::array();
  int64_t stride = 1;
  std::vector<int64_t> strides(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    m["sizes"].push_back({{"as_int", sizes[d]}});
    m["strides"].push_back({{"as_int", strides[d]}});
  }
  return m;
}

json named(const std::string& name, json arg, int kind = 1) { return {{"name", name}, {"arg", arg}, {"kind", kind}}; }

class SyntheticTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base = ArchiveEntries::read(fixture_path("tiny_convnet"));
    model = json::parse(base.text("models/model.json"));
  }
  json& graph() { return model["graph_module"]["graph"]; }
  Program load() {
    ArchiveEntries a = base;
    a.set_text("models/model.json", model.dump());
    Program p = load_program_from_bytes(a.zip(), "synthetic.pt2");
    ir::verify(*p.graph);
    return p;
  }
  ArchiveEntries base;
  json model;
};

TEST_F(SyntheticTest, EveryArgumentKind) {
  // A node of an op outside the schema table keeps exactly what the archive gave.
  graph()["sym_int_values"]["n"] = {{"as_expr", {{"expr_str", "Symbol('s77', positive=True, integer=True)"},
                                                {"hint", {{"as_int", 2}}}}}};
  graph()["nodes"].push_back({{"target", "torch.ops.aten.sym_size.int"},
                              {"inputs", {named("self", {{"as_tensor", {{"name", "x"}}}}), named("dim", {{"as_int", 0}})}},
                              {"outputs", {{{"as_sym_int", {{"as_name", "n"}}}}}},
                              {"metadata", json::object()},
                              {"name", "n"}});
  json inputs = json::array({
      named("a", {{"as_none", true}}),
      named("b", {{"as_tensor", {{"name", "x"}}}}),
      named("c", {{"as_tensors", {{{"name", "x"}}, {{"name", "relu"}}}}}),
      named("d", {{"as_optional_tensors", {{{"as_tensor", {{"name", "x"}}}}, {{"as_none", true}}}}}),
      named("e", {{"as_int", -3}}),
      named("f", {{"as_ints", {1, 2, 3}}}),
      named("g", {{"as_float", 0.5}}),
      named("h", {{"as_floats", {1.5, "-Infinity"}}}),
      named("i", {{"as_bool", true}}),
      named("j", {{"as_bools", {true, false}}}),
      named("k", {{"as_string", "tanh"}}),
      named("l", {{"as_strings", {"p", "q"}}}),
      named("m", {{"as_sym_int", {{"as_name", "n"}}}}),
      named("n", {{"as_sym_int", {{"as_int", 7}}}}),
      named("o", {{"as_sym_ints", {{{"as_name", "n"}}, {{"as_int", 4}}}}}),
      named("p", {{"as_sym_float", {{"as_float", 2.5}}}}),
      named("q", {{"as_sym_bool", {{"as_bool", false}}}}),
      named("r", {{"as_scalar_type", 13}}),
      named("s", {{"as_layout", 7}}),
      named("t", {{"as_memory_format", 2}}),
      named("u", {{"as_device", {{"type", "cuda"}, {"index", 1}}}}, 2),
      named("v", {{"as_optional_tensor", {{"as_none", true}}}}),
  });
  graph()["tensor_values"]["split_0"] = tensor_meta({2, 4});
  graph()["tensor_values"]["split_1"] = tensor_meta({2, 4});
  graph()["nodes"].push_back({{"target", "torch.ops.aten.kiln_test_op.default"},
                              {"inputs", inputs},
                              {"outputs", {{{"as_none", true}}, {{"as_tensors", {{{"name", "split_0"}}, {{"name", "split_1"}}}}}}},
                              {"metadata", {{"stack_trace", "here"}}},
                              {"name", "test_op"}});
  Program p = load();
  const ir::Node* node = p.graph->find_node("test_op");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->metadata().at("stack_trace"), "here");
  ASSERT_EQ(node->args().size(), 22u);
  const ir::Value* x = p.graph->find_value("x");
  const ir::Value* n = p.graph->find_value("n");
  EXPECT_EQ(n->kind(), ir::ValueKind::SymInt);
  EXPECT_TRUE(node->arg("a").is_none());
  EXPECT_EQ(node->arg("b").as_tensor(), x);
  EXPECT_EQ(node->arg("c").as_tensors().size(), 2u);
  EXPECT_EQ(node->arg("d").kind(), ir::Argument::Kind::OptionalTensors);
  EXPECT_EQ(node->arg("d").as_tensors()[0], x);
  EXPECT_EQ(node->arg("d").as_tensors()[1], nullptr);
  EXPECT_EQ(node->arg("e").as_int(), -3);
  EXPECT_EQ(node->arg("f").as_ints(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(node->arg("g").as_float(), 0.5);
  EXPECT_EQ(node->arg("h").as_floats()[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(node->arg("i").as_bool());
  EXPECT_EQ(node->arg("j").as_bools(), (std::vector<bool>{true, false}));
  EXPECT_EQ(node->arg("k").as_string(), "tanh");
  EXPECT_EQ(node->arg("l").as_strings(), (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(node->arg("m").as_sym_int().value, n);
  EXPECT_EQ(node->arg("n").as_sym_int().constant, 7);
  auto o = node->arg("o").as_sym_ints();
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].value, n);
  EXPECT_EQ(o[1].constant, 4);
  EXPECT_DOUBLE_EQ(node->arg("p").as_float(), 2.5);
  EXPECT_FALSE(node->arg("q").as_bool());
  EXPECT_EQ(node->arg("r").as_scalar_type(), DType::BFloat16);
  EXPECT_EQ(node->arg("s").as_layout(), ir::Layout::Strided);
  EXPECT_EQ(node->arg("t").as_memory_format(), ir::MemoryFormat::ChannelsLast);
  EXPECT_EQ(node->arg("u").as_device(), (ir::Device{"cuda", 1}));
  EXPECT_TRUE(node->args()[20].kwarg_only);
  EXPECT_FALSE(node->args()[19].kwarg_only);
  EXPECT_TRUE(node->arg("v").is_none());
  // Outputs: the None slot is an unused Opaque value; the list return gives one value per element.
  ASSERT_EQ(node->outputs().size(), 3u);
  EXPECT_EQ(node->output(0)->kind(), ir::ValueKind::Opaque);
  EXPECT_EQ(node->output(1)->name(), "split_0");
  EXPECT_EQ(node->output(2)->name(), "split_1");
  EXPECT_EQ(node->output(2)->meta().to_string(), "f32[2, 4]");
  ASSERT_TRUE(n->sym_value().has_value());
  EXPECT_EQ(n->sym_value()->symbol_name(), "s77");
}

TEST_F(SyntheticTest, RangeBounds) {
  model["range_constraints"]["s77"] = {{"min_val", 2}, {"max_val", nullptr}};
  EXPECT_EQ(load().graph->symbol_ranges().at("s77"), (ir::SymRange{2, ir::SymRange::kUnbounded}));
  model["range_constraints"]["s77"] = {{"min_val", nullptr}, {"max_val", int64_t{9223372036854775806}}};
  EXPECT_EQ(load().graph->symbol_ranges().at("s77"), (ir::SymRange{0, ir::SymRange::kUnbounded}));
  model["range_constraints"]["s77"] = {{"min_val", 1}, {"max_val", "Infinity"}};
  EXPECT_EQ(load().graph->symbol_ranges().at("s77"), (ir::SymRange{1, ir::SymRange::kUnbounded}));
  model["range_constraints"]["s77"] = {{"min_val", 9}, {"max_val", 3}};
  EXPECT_THROW(load(), Error);
}

TEST_F(SyntheticTest, ConstantsConfigHoldsTensorConstantsAndNonPersistentBuffers) {
  // Turn the bn.running_mean buffer into a non-persistent one and fc.bias into a tensor constant, both stored
  // through the constants config (as torch writes them) with their bytes under data/constants/.
  json weights = json::parse(base.text("model_weights_config.json"));
  json constants = json::parse(base.text("model_constants_config.json"));
  for (const auto& [fqn, file] : {std::pair<std::string, std::string>{"bn.running_mean", "tensor_0"},
                                  {"_tensor_constant0", "tensor_1"}}) {
    const std::string from = fqn == "bn.running_mean" ? "bn.running_mean" : "fc.bias";
    json entry = weights["config"][from];
    const std::string old_path = entry["path_name"];
    entry["path_name"] = file;
    constants["config"][fqn] = entry;
    weights["config"].erase(from);
    base.entries.push_back({"model/data/constants/" + file, *base.find("data/weights/" + old_path)});
  }
  base.set_text("model_weights_config.json", weights.dump());
  base.set_text("model_constants_config.json", constants.dump());
  for (json& spec : model["graph_module"]["signature"]["input_specs"]) {
    if (spec.contains("buffer") && spec["buffer"]["buffer_name"] == "bn.running_mean") {
      spec["buffer"]["persistent"] = false;
    }
    if (spec.contains("parameter") && spec["parameter"]["parameter_name"] == "fc.bias") {
      spec = {{"tensor_constant", {{"arg", spec["parameter"]["arg"]}, {"tensor_constant_name", "_tensor_constant0"}}}};
    }
  }
  Program p = load();
  int found = 0;
  for (const ir::Value* c : p.graph->constants()) {
    if (c->fqn() == "bn.running_mean") {
      EXPECT_EQ(c->constant_kind(), ir::ConstantKind::Buffer);
      ++found;
    }
    if (c->fqn() == "_tensor_constant0") {
      EXPECT_EQ(c->constant_kind(), ir::ConstantKind::Tensor);
      EXPECT_EQ(c->data().sizes(), (std::vector<int64_t>{4}));
      ++found;
    }
  }
  EXPECT_EQ(found, 2);
  // fc.bias is no longer a parameter.
  EXPECT_EQ(p.parameter_count(), 276 - 4);
}

TEST_F(SyntheticTest, SymIntUserInputAndOutputs) {
  // A SymInt user input feeding nothing, and the batch size as an extra graph output.
  graph()["inputs"].push_back({{"as_sym_int", {{"as_name", "k"}}}});
  graph()["sym_int_values"]["k"] = {{"as_int", 5}};
  model["graph_module"]["signature"]["input_specs"].push_back({{"user_input", {{"arg", {{"as_sym_int", {{"as_name", "k"}}}}}}}});
  graph()["outputs"].push_back({{"as_sym_int", {{"as_name", "k"}}}});
  model["graph_module"]["signature"]["output_specs"].push_back({{"user_output", {{"arg", {{"as_sym_int", {{"as_name", "k"}}}}}}}});
  Program p = load();
  ASSERT_EQ(p.user_inputs().size(), 2u);
  EXPECT_EQ(p.user_inputs()[1]->kind(), ir::ValueKind::SymInt);
  EXPECT_EQ(p.user_inputs()[1]->sym_value()->as_int(), 5);
  ASSERT_EQ(p.graph->outputs().size(), 3u);
  EXPECT_EQ(p.output_kinds.size(), 3u);

  // A mismatched spec is an error naming both names.
  model["graph_module"]["signature"]["output_specs"][0]["user_output"]["arg"]["as_tensor"]["name"] = "relu";
  try {
    load();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'relu'"), std::string::npos) << e.what();
  }
}


// An "as_graph" argument: a nested graph `input -> op -> output` of f32[2, 4] values.
json graph_argument(const std::string& input, const std::string& op, const std::string& output) {
  json g;
  g["inputs"] = json::array({{{"as_tensor", {{"name", input}}}}});
  g["nodes"] = json::array({{{"target", op},
                             {"inputs", {named("self", {{"as_tensor", {{"name", input}}}})}},
                             {"outputs", {{{"as_tensor", {{"name", output}}}}}},
                             {"metadata", json::object()},
                             {"name", output}}});
  g["tensor_values"] = {{input, tensor_meta({2, 4})}, {output, tensor_meta({2, 4})}};
  g["sym_int_values"] = json::object();
  g["outputs"] = json::array({{{"as_tensor", {{"name", output}}}}});
  g["is_single_tensor_return"] = false;
  return {{"as_graph", {{"name", output + "_graph"}, {"graph", g}}}};
}

json hop_node(const std::string& target, json inputs, const std::string& output) {
  return {{"target", "torch.ops.higher_order." + target},
          {"inputs", std::move(inputs)},
          {"outputs", {{{"as_tensor", {{"name", output}}}}}},
          {"metadata", json::object()},
          {"name", output}};
}

TEST_F(SyntheticTest, CondLoadsItsBranchesAsNestedGraphs) {
  graph()["tensor_values"]["cond_out"] = tensor_meta({2, 4});
  graph()["nodes"].push_back(hop_node("cond",
                                      {named("", {{"as_tensor", {{"name", "x"}}}}),
                                       named("", graph_argument("a", "torch.ops.aten.relu.default", "relu")),
                                       named("", graph_argument("b", "torch.ops.aten.neg.default", "neg")),
                                       named("", {{"as_tensors", {{{"name", "x"}}}}})},
                                      "cond_out"));
  Program p = load();
  const ir::Node* cond = p.graph->find_node("cond_out");
  ASSERT_NE(cond, nullptr);
  EXPECT_TRUE(ir::is_higher_order(cond->target()));
  std::vector<const ir::Graph*> branches = ir::nested_graphs(*cond);
  ASSERT_EQ(branches.size(), 2u);
  // Each branch has its own values: its "relu" is not the program's relu.
  const ir::Node* inner = branches[0]->find_node("relu");
  ASSERT_NE(inner, nullptr);
  EXPECT_NE(p.graph->find_node("relu"), inner);
  EXPECT_EQ(inner->arg("self").as_tensor(), branches[0]->inputs()[0]);
  EXPECT_EQ(branches[1]->nodes()[0]->target().to_string(), "aten.neg.default");
  EXPECT_EQ(cond->inputs(), (std::vector<ir::Value*>{p.graph->find_value("x")}));
}

TEST_F(SyntheticTest, GradAndAutocastWrappersAreInlined) {
  graph()["tensor_values"]["no_grad_out"] = tensor_meta({2, 4});
  graph()["tensor_values"]["autocast_out"] = tensor_meta({2, 4});
  graph()["tensor_values"]["after"] = tensor_meta({2, 4});
  graph()["nodes"].push_back(hop_node("wrap_with_set_grad_enabled",
                                      {named("", {{"as_bool", false}}),
                                       named("", graph_argument("a", "torch.ops.aten.relu.default", "relu")),
                                       named("", {{"as_tensor", {{"name", "x"}}}})},
                                      "no_grad_out"));
  graph()["nodes"].push_back(hop_node("wrap_with_autocast",
                                      {named("", {{"as_string", "cpu"}}), named("", {{"as_none", true}}),
                                       named("", {{"as_bool", false}}), named("", {{"as_none", true}}),
                                       named("", graph_argument("b", "torch.ops.aten.tanh.default", "tanh")),
                                       named("", {{"as_tensor", {{"name", "no_grad_out"}}}})},
                                      "autocast_out"));
  graph()["nodes"].push_back({{"target", "torch.ops.aten.neg.default"},
                              {"inputs", {named("self", {{"as_tensor", {{"name", "autocast_out"}}}})}},
                              {"outputs", {{{"as_tensor", {{"name", "after"}}}}}},
                              {"metadata", json::object()},
                              {"name", "after"}});
  Program p = load();
  for (const ir::Node* n : p.graph->nodes()) EXPECT_FALSE(ir::is_higher_order(n->target())) << n->name();
  // neg(tanh(relu(x))): the wrappers' nodes replaced them, under fresh names where the program has theirs.
  const ir::Node* neg = p.graph->find_node("after");
  const ir::Node* tanh = neg->arg("self").as_tensor()->producer();
  ASSERT_NE(tanh, nullptr);
  EXPECT_EQ(tanh->target().to_string(), "aten.tanh.default");
  EXPECT_EQ(tanh->metadata().at(ir::kAutocastKey), "cpu:disabled");
  const ir::Node* relu = tanh->arg("self").as_tensor()->producer();
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->target().to_string(), "aten.relu.default");
  EXPECT_NE(relu, p.graph->find_node("relu"));
  EXPECT_EQ(relu->arg("self").as_tensor(), p.graph->find_value("x"));
  EXPECT_EQ(relu->metadata().count(ir::kAutocastKey), 0u);
}

TEST_F(SyntheticTest, ArgumentKindsKilnCannotRepresentDoNotFailTheLoad) {
  graph()["tensor_values"]["odd"] = tensor_meta({2, 4});
  graph()["nodes"].push_back({{"target", "torch.ops.aten.kiln_test_op.default"},
                              {"inputs", {named("self", {{"as_tensor", {{"name", "x"}}}}),
                                          named("fn", {{"as_operator", "torch.ops.aten.add.Tensor"}}),
                                          named("z", {{"as_complex", {{"real", 1.0}, {"imag", 2.0}}}})}},
                              {"outputs", {{{"as_tensor", {{"name", "odd"}}}}}},
                              {"metadata", json::object()},
                              {"name", "odd"}});
  Program p = load();
  const ir::Node* node = p.graph->find_node("odd");
  ASSERT_NE(node, nullptr);
  const std::string& why = node->metadata().at(ir::kUnsupportedArgumentKey);
  EXPECT_NE(why.find("'fn' of kind 'as_operator'"), std::string::npos) << why;
  EXPECT_NE(why.find("'z' of kind 'as_complex'"), std::string::npos) << why;
  EXPECT_EQ(node->arg("fn").as_string(), "\"torch.ops.aten.add.Tensor\"");
}

}  // namespace
}  // namespace kiln::frontend
