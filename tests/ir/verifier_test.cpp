// The verifier: each structural violation is reported as kiln::Error(Internal) naming node and value.

#include "kiln/ir/verifier.h"

#include <gtest/gtest.h>

#include "kiln/ir/text.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

void expect_violation(const Graph& g, const std::string& needle) {
  try {
    verify(g);
    ADD_FAILURE() << "expected a verifier error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

const char* kGood = R"(graph(%x: f32[s0, 2], %n: sym_int) {
  symbol s0 in [1, 8]
  %w: f32[2] = parameter("w")
  %m: f32[s0, 2] = aten.mul.Tensor(self=%x, other=%w)
  %v: f32[s0, 2] = aten.view.default(self=%m, size=[%n, 2])
  return (%v)
}
)";

TEST(Verifier, AcceptsWellFormedGraphs) { verify(*parse_graph(kGood)); }

TEST(Verifier, UseBeforeDefinition) {
  auto g = parse_graph(kGood);
  g->move_before(g->find_node("v"), g->find_node("m"));
  expect_violation(*g, "uses value 'm' before its definition");
  try {
    verify(*g);
  } catch (const Error& e) {
    EXPECT_EQ(e.context().node, "v");
    EXPECT_EQ(e.context().op, "aten.view.default");
  }
}

TEST(Verifier, ValueFromAnotherGraph) {
  auto g = parse_graph(kGood);
  Graph other;
  Value* stranger = other.add_input("stranger", ValueKind::Tensor);
  g->find_node("m")->set_arg("other", Argument::tensor(stranger));
  expect_violation(*g, "'stranger' that is not defined in the graph");
}

TEST(Verifier, DanglingOutputs) {
  auto g = parse_graph(kGood);
  Graph other;
  g->set_outputs({other.add_input("elsewhere", ValueKind::Tensor)});
  expect_violation(*g, "graph output 0 'elsewhere' is not defined");
  g->set_outputs({nullptr});
  expect_violation(*g, "graph output 0 is null");
}

TEST(Verifier, WrongArgumentKinds) {
  auto g = parse_graph(kGood);
  Node* m = g->find_node("m");
  m->set_arg("other", Argument::tensor(g->find_value("n")));
  expect_violation(*g, "argument 'other' of kind Tensor refers to value 'n' of kind SymInt");
  g = parse_graph(kGood);
  g->find_node("v")->set_arg("size", Argument::sym_ints({{g->find_value("x"), 0}, {nullptr, 2}}));
  expect_violation(*g, "argument 'size' of kind SymInts refers to value 'x' of kind Tensor");
  g = parse_graph(kGood);
  g->find_node("v")->set_arg("flag", Argument::sym_bool(g->find_value("n")));
  expect_violation(*g, "of kind SymBool refers to value 'n' of kind SymInt");
}

TEST(Verifier, DuplicateNamesInSubgraphsAndNestedErrors) {
  auto g = parse_graph(R"(graph(%x: f32[2]) {
  %seg: f32[2] = kiln.engine_segment.default(inputs=[%x]) graph(%a: f32[2]) {
    %r: f32[2] = aten.relu.default(self=%a)
    %q: f32[2] = aten.neg.default(self=%r)
    return (%q)
  }
  return (%seg)
}
)");
  verify(*g);
  Graph& sub = *g->find_node("seg")->subgraph();
  sub.move_before(sub.find_node("q"), sub.find_node("r"));
  expect_violation(*g, "subgraph of node 'seg'");
}

}  // namespace
}  // namespace kiln::ir
