// Graph building and editing: create, unique names, replace uses, erase, move, topological sort, clone,
// UseMap.

#include "kiln/ir/graph.h"

#include <gtest/gtest.h>

#include "ir/ir_test_util.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

using testing::f32;
OpName op(const char* name) { return OpName::parse(name); }

struct Chain {
  Graph g;
  Value* x;
  Node* relu;
  Node* neg;
  Node* add;
  Chain() {
    x = g.add_input("x", ValueKind::Tensor, f32({2, 3}));
    relu = g.create_node(op("aten.relu.default"), {{"self", Argument::tensor(x)}},
                         {{"relu", ValueKind::Tensor, f32({2, 3})}});
    neg = g.create_node(op("aten.neg.default"), {{"self", Argument::tensor(relu->output())}},
                        {{"neg", ValueKind::Tensor, f32({2, 3})}});
    add = g.create_node(
        op("aten.add.Tensor"),
        {{"self", Argument::tensor(neg->output())}, {"other", Argument::tensor(relu->output())}},
        {{"add", ValueKind::Tensor, f32({2, 3})}});
    g.set_outputs({add->output()});
  }
};

TEST(Graph, BuildAndQuery) {
  Chain c;
  verify(c.g);
  EXPECT_EQ(c.g.num_nodes(), 3u);
  EXPECT_EQ(c.g.find_node("neg"), c.neg);
  EXPECT_EQ(c.g.find_value("relu"), c.relu->output());
  EXPECT_EQ(c.relu->output()->producer(), c.relu);
  EXPECT_EQ(c.relu->output()->role(), ValueRole::NodeOutput);
  EXPECT_EQ(c.g.users(c.relu->output()), (std::vector<Node*>{c.neg, c.add}));
  EXPECT_EQ(c.g.index_of(c.add), 2u);
  EXPECT_TRUE(c.g.is_output(c.add->output()));
  EXPECT_EQ(c.add->inputs(), (std::vector<Value*>{c.neg->output(), c.relu->output()}));
  UseMap uses(c.g);
  EXPECT_EQ(uses.users(c.relu->output()).size(), 2u);
  EXPECT_TRUE(uses.users(c.add->output()).empty());
  EXPECT_EQ(c.g.find_value("nope"), nullptr);
}

TEST(Graph, NamesAreUniqueAndDerived) {
  Chain c;
  EXPECT_EQ(c.g.unique_name("relu"), "relu_1");
  EXPECT_EQ(c.g.unique_name("fresh"), "fresh");
  Node* r2 = c.g.create_node(op("aten.relu.default"), {{"self", Argument::tensor(c.x)}},
                             {{"", ValueKind::Tensor, f32({2, 3})}});
  EXPECT_EQ(r2->name(), "relu_1");
  EXPECT_EQ(r2->output()->name(), "relu_1_1") << "an output without a name is derived from the node name";
  Node* multi = c.g.create_node(
      op("aten.max.dim"), {{"self", Argument::tensor(c.x)}, {"dim", Argument::int_(0)}},
      {{"", ValueKind::Tensor, f32({3})}, {"", ValueKind::Tensor, TensorMeta::make(DType::Int64, {3})}},
      nullptr, "max");
  EXPECT_EQ(multi->outputs().size(), 2u);
  EXPECT_NE(multi->output(0)->name(), multi->output(1)->name());
  EXPECT_EQ(multi->output(1)->output_index(), 1u);
  EXPECT_THROW(c.g.add_input("x", ValueKind::Tensor), Error);
  EXPECT_THROW(c.g.create_node(op("aten.relu.default"), {}, {{"neg", ValueKind::Tensor, {}}}), Error);
  EXPECT_THROW(c.g.create_node(op("aten.relu.default"), {}, {}, nullptr, "neg"), Error);
  EXPECT_THROW(multi->output(2), Error);
  verify(c.g);
}

TEST(Graph, ReplaceAllUsesCoversArgumentsAndOutputs) {
  Chain c;
  Node* other = c.g.create_node(op("aten.sigmoid.default"), {{"self", Argument::tensor(c.x)}},
                                {{"sig", ValueKind::Tensor, f32({2, 3})}}, c.neg);
  EXPECT_EQ(c.g.index_of(other), 1u);
  EXPECT_EQ(c.g.replace_all_uses(c.relu->output(), other->output()), 2u);
  EXPECT_TRUE(c.g.users(c.relu->output()).empty());
  EXPECT_EQ(c.neg->arg("self").as_tensor(), other->output());
  EXPECT_EQ(c.g.replace_all_uses(c.add->output(), c.neg->output()), 1u);
  EXPECT_EQ(c.g.outputs()[0], c.neg->output());
  c.g.erase_node(c.add);
  c.g.erase_node(c.relu);
  verify(c.g);
  EXPECT_EQ(c.g.num_nodes(), 2u);
  EXPECT_EQ(c.g.find_value("relu"), nullptr);
  EXPECT_EQ(c.g.find_node("relu"), nullptr);
}

TEST(Graph, EraseWithUsersFails) {
  Chain c;
  try {
    c.g.erase_node(c.relu);
    FAIL() << "erase of a used node must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
    EXPECT_NE(std::string(e.what()).find("still used by node 'neg'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(c.g.erase_node(c.add), Error) << "a graph output";
  EXPECT_THROW(c.g.erase_value(c.x), Error) << "an input with users";
  EXPECT_THROW(c.g.erase_value(c.relu->output()), Error) << "a node output";
  Value* unused =
      c.g.add_constant("w", "fc.weight", ConstantKind::Parameter, HostTensor::from_floats({1, 2}, {2}));
  EXPECT_EQ(unused->meta(), f32({2}));
  c.g.erase_value(unused);
  EXPECT_TRUE(c.g.constants().empty());
  verify(c.g);
}

TEST(Graph, MoveAndTopologicalSortIsStable) {
  Chain c;
  Node* s1 = c.g.create_node(op("aten.sin.default"), {{"self", Argument::tensor(c.x)}},
                             {{"s1", ValueKind::Tensor, f32({2, 3})}});
  Node* s2 = c.g.create_node(op("aten.cos.default"), {{"self", Argument::tensor(c.x)}},
                             {{"s2", ValueKind::Tensor, f32({2, 3})}});
  c.g.move_before(c.relu, nullptr);  // relu now after its users
  c.g.move_before(s2, c.neg);
  EXPECT_THROW(verify(c.g), Error);
  c.g.topological_sort();
  verify(c.g);
  std::vector<std::string> names;
  for (Node* n : c.g.nodes()) names.push_back(n->name());
  // Kahn's order taking the earliest ready node: s2 and s1 keep their places, relu moves before its users.
  EXPECT_EQ(names, (std::vector<std::string>{"s2", "s1", "relu", "neg", "add"}));
  c.g.topological_sort();
  std::vector<std::string> again;
  for (Node* n : c.g.nodes()) again.push_back(n->name());
  EXPECT_EQ(again, names);
  (void)s1;
}

TEST(Graph, TopologicalSortDetectsCycles) {
  Chain c;
  c.relu->set_arg("self", Argument::tensor(c.add->output()));
  try {
    c.g.topological_sort();
    FAIL() << "a cycle must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos);
  }
}

TEST(Graph, CloneIsDeep) {
  auto g = parse_graph(R"(graph(%x: f32[s0, 2], %n: sym_int) {
  symbol s0 in [1, 8] hint 4
  %w: f32[2] = parameter("w")
  %m: f32[s0, 2] = aten.mul.Tensor(self=%x, other=%w)
  %v: f32[s0, 2] = aten.view.default(self=%m, size=[%n, 2])
  %seg: f32[s0, 2] = kiln.engine_segment.default(inputs=[%v]) graph(%a: f32[s0, 2]) {
    %r: f32[s0, 2] = aten.relu.default(self=%a)
    return (%r)
  }
  return (%seg)
}
)");
  g->find_value("w")->set_data(HostTensor::from_floats({0.25f, -3.5f}, {2}));
  g->find_node("m")->mutable_metadata()["nn_module_stack"] = "fc";
  auto c = g->clone();
  verify(*c);
  EXPECT_EQ(print_graph(*c), print_graph(*g));
  EXPECT_NE(c->find_value("x"), g->find_value("x"));
  EXPECT_EQ(c->find_node("m")->arg("self").as_tensor(), c->find_value("x"));
  EXPECT_EQ(c->find_node("v")->arg("size").as_sym_ints()[0].value, c->find_value("n"));
  EXPECT_EQ(c->find_node("m")->metadata().at("nn_module_stack"), "fc");
  EXPECT_EQ(c->find_value("w")->data().data(), g->find_value("w")->data().data())
      << "constants share storage";
  ASSERT_NE(c->find_node("seg")->subgraph(), nullptr);
  EXPECT_NE(c->find_node("seg")->subgraph().get(), g->find_node("seg")->subgraph().get());
  EXPECT_EQ(c->symbol_hints().at("s0"), 4);
  // Editing the clone leaves the original alone.
  Graph& sub = *c->find_node("seg")->subgraph();
  sub.set_outputs({sub.find_value("a")});
  sub.erase_node(sub.find_node("r"));
  EXPECT_EQ(g->find_node("seg")->subgraph()->num_nodes(), 1u);
}

TEST(Node, ArgumentsByNameAndIndex) {
  Chain c;
  EXPECT_EQ(c.add->arg(1).as_tensor(), c.relu->output());
  EXPECT_EQ(c.add->find_arg("alpha"), nullptr);
  c.add->set_arg("alpha", Argument::int_(2), true);
  EXPECT_EQ(c.add->arg("alpha").as_int(), 2);
  EXPECT_TRUE(c.add->args().back().kwarg_only);
  c.add->set_arg("alpha", Argument::float_(0.5));
  EXPECT_EQ(c.add->args().size(), 3u);
  EXPECT_EQ(c.add->arg("alpha").as_float(), 0.5);
  c.add->remove_arg("alpha");
  EXPECT_FALSE(c.add->has_arg("alpha"));
  try {
    c.add->arg("alpha");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("alpha"), std::string::npos);
    EXPECT_EQ(e.context().node, "add");
  }
  EXPECT_THROW(c.add->arg(7), Error);
}

TEST(OpName, ParseForms) {
  EXPECT_EQ(OpName::parse("torch.ops.aten.conv2d.default").to_string(), "aten.conv2d.default");
  EXPECT_EQ(OpName::parse("aten::add.Tensor"), (OpName{"aten", "add", "Tensor"}));
  EXPECT_EQ(OpName::parse("aten.relu"), (OpName{"aten", "relu", "default"}));
  OpName mul = OpName::parse("_operator.mul");
  EXPECT_TRUE(mul.is_python_operator());
  EXPECT_EQ(mul.to_string(), "_operator.mul");
  EXPECT_TRUE(OpName::parse("operator.getitem").is_python_operator());
  EXPECT_TRUE(OpName::parse("math.ceil").is_python_operator());
  EXPECT_FALSE(OpName::parse("aten.sym_size.int").is_python_operator());
  EXPECT_EQ(OpName::parse("aten.sym_size.int").packet(), "aten.sym_size");
  EXPECT_EQ(OpName::parse("aten.sym_size.int").qualified_name(), "aten::sym_size");
  for (const char* bad : {"", "relu", "aten..x", "aten.a.b.c", "aten.re lu.default", ".x"}) {
    EXPECT_THROW(OpName::parse(bad), Error) << bad;
  }
}

TEST(TensorMeta, StridesDevicesAndText) {
  SymExpr s = SymExpr::symbol("s0");
  TensorMeta m;
  m.sizes = {s, 3, 4};
  EXPECT_EQ(TensorMeta::contiguous_strides(m.sizes), (std::vector<SymExpr>{12, 4, 1}));
  m.sizes = {2, s, 4};
  EXPECT_EQ(TensorMeta::contiguous_strides(m.sizes), (std::vector<SymExpr>{4 * s, 4, 1}));
  EXPECT_EQ(TensorMeta::contiguous_strides({2, 0, 3}), (std::vector<SymExpr>{3, 3, 1}));
  EXPECT_FALSE(m.is_static());
  EXPECT_EQ(m.to_string(), "f32[2, s0, 4]");
  TensorMeta explicit_strides = m;
  explicit_strides.strides = TensorMeta::contiguous_strides(m.sizes);
  EXPECT_EQ(explicit_strides, m) << "explicit contiguous strides equal empty strides";
  EXPECT_EQ(explicit_strides.to_string(), "f32[2, s0, 4]");
  explicit_strides.strides = {1, 2, 2 * s};
  explicit_strides.device = Device::parse("cuda:1");
  EXPECT_EQ(explicit_strides.to_string(), "f32[2, s0, 4]{strides=[1, 2, 2*s0]}@cuda:1");
  EXPECT_NE(explicit_strides, m);
  EXPECT_EQ(TensorMeta::make(DType::Int64, {2, 3}).static_sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Device::parse("cpu").to_string(), "cpu");
  EXPECT_EQ(Device::parse("cuda").index, -1);
  for (const char* bad : {"", "cuda:", "cuda:x", ":0", "CUDA"})
    EXPECT_THROW(Device::parse(bad), Error) << bad;
}

}  // namespace
}  // namespace kiln::ir
