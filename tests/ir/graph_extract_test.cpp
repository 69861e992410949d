// Graph copying: node copies keep names, metadata and subgraphs; extraction finds a node set's inputs,
// constants and outputs; the canonical copy keeps structure only.

#include "kiln/ir/graph_extract.h"

#include <gtest/gtest.h>

#include "ir/ir_test_util.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

using testing::f32;

// x -> relu -> mul(relu, w) -> add(mul, relu) -> neg; outputs add and neg.
struct Net {
  Graph g;
  Value* x = g.add_input("x", ValueKind::Tensor, f32({2}));
  Value* w =
      g.add_constant("w", "fc.weight", ConstantKind::Parameter, HostTensor::from_floats({1.5f, -2}, {2}));
  Node* relu = g.create_node(OpName::parse("aten.relu.default"), {{"self", Argument::tensor(x)}},
                             {{"relu", ValueKind::Tensor, f32({2})}});
  Node* mul = g.create_node(OpName::parse("aten.mul.Tensor"),
                            {{"self", Argument::tensor(relu->output())}, {"other", Argument::tensor(w)}},
                            {{"mul", ValueKind::Tensor, f32({2})}});
  Node* add =
      g.create_node(OpName::parse("aten.add.Tensor"),
                    {{"self", Argument::tensor(mul->output())}, {"other", Argument::tensor(relu->output())}},
                    {{"add", ValueKind::Tensor, f32({2})}});
  Node* neg = g.create_node(OpName::parse("aten.neg.default"), {{"self", Argument::tensor(add->output())}},
                            {{"neg", ValueKind::Tensor, f32({2})}});
  Net() {
    g.set_outputs({add->output(), neg->output()});
    mul->mutable_metadata()["kiln.test"] = "kept";
    g.symbol_hints()["s0"] = 4;
  }
};

TEST(GraphExtract, ExtractsInputsConstantsAndOutputsOfANodeSet) {
  Net n;
  const UseMap uses(n.g);
  ExtractedGraph e = extract_subgraph(n.g, {n.mul, n.add}, uses);
  verify(*e.graph);
  EXPECT_EQ(e.inputs, (std::vector<const Value*>{n.relu->output()}));
  EXPECT_EQ(e.outputs, (std::vector<const Value*>{n.add->output()}));
  ASSERT_EQ(e.graph->inputs().size(), 1u);
  EXPECT_EQ(e.graph->inputs()[0]->name(), "relu");
  ASSERT_EQ(e.graph->constants().size(), 1u);
  EXPECT_EQ(e.graph->constants()[0]->fqn(), "fc.weight");
  EXPECT_EQ(e.graph->constants()[0]->data().data(), n.w->data().data()) << "the data is shared, not copied";
  ASSERT_EQ(e.graph->num_nodes(), 2u);
  EXPECT_EQ(e.graph->find_node("mul")->metadata().at("kiln.test"), "kept");
  EXPECT_EQ(e.graph->outputs()[0]->name(), "add");
  EXPECT_EQ(e.graph->symbol_hints().at("s0"), 4);
}

TEST(GraphExtract, AnOutputReadByNoLaterNodeIsReturnedOnlyWhenTheGraphReturnsIt) {
  Net n;
  const UseMap uses(n.g);
  ExtractedGraph e = extract_subgraph(n.g, {n.relu, n.mul}, uses);
  EXPECT_EQ(e.inputs, (std::vector<const Value*>{n.x}));
  EXPECT_EQ(e.outputs, (std::vector<const Value*>{n.relu->output(), n.mul->output()}));
}

TEST(GraphExtract, CopyingANodeWhoseInputIsUnmappedIsAnInternalError) {
  Net n;
  Graph dst;
  ValueMap map;
  try {
    copy_node(dst, *n.mul, map);
    FAIL() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
    EXPECT_NE(e.message().find("'relu'"), std::string::npos) << e.message();
  }
}

TEST(GraphExtract, CanonicalCopyKeepsStructureOnly) {
  Net n;
  std::unique_ptr<Graph> c = canonical_copy(n.g);
  verify(*c);
  EXPECT_EQ(c->inputs()[0]->name(), "v0");
  EXPECT_EQ(c->constants()[0]->name(), "v1");
  EXPECT_EQ(c->constants()[0]->fqn(), "fc.weight");
  EXPECT_FALSE(c->constants()[0]->data().defined());
  EXPECT_EQ(c->constants()[0]->meta(), n.w->meta());
  std::vector<std::string> names;
  for (const Node* node : c->nodes()) {
    names.push_back(node->name() + ":" + node->output()->name());
    EXPECT_TRUE(node->metadata().empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"n0:v2", "n1:v3", "n2:v4", "n3:v5"}));
  EXPECT_EQ(c->outputs()[1]->name(), "v5");
  EXPECT_EQ(c->symbol_hints().at("s0"), 4);

  // Renaming every value and node and changing the weights' values leaves the canonical text as it is.
  Net other;
  other.w->set_data(HostTensor::from_floats({7, 8}, {2}));
  EXPECT_EQ(print_graph(*canonical_copy(other.g)), print_graph(*c));
}

TEST(GraphExtract, CanonicalCopyNamesAConstantWithoutStateDictNameByItsValueName) {
  Graph g;
  Value* k = g.add_constant("lifted_tensor_0", "", ConstantKind::Tensor, HostTensor::from_floats({1}, {1}));
  g.set_outputs({k});
  EXPECT_EQ(canonical_copy(g)->constants()[0]->fqn(), "lifted_tensor_0");
}

}  // namespace
}  // namespace kiln::ir
