// The engine segment node: its identity and the values it passes to its subgraph.

#include "kiln/ir/segment.h"

#include <gtest/gtest.h>

#include "ir/ir_test_util.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

using testing::f32;

// A graph with one engine segment reading x and y (its subgraph adds them).
struct Segmented {
  Graph g;
  Value* x = g.add_input("x", ValueKind::Tensor, f32({2}));
  Value* y = g.add_input("y", ValueKind::Tensor, f32({2}));
  Node* seg = nullptr;
  Segmented() {
    auto sub = std::make_shared<Graph>();
    Value* a = sub->add_input("x", ValueKind::Tensor, f32({2}));
    Value* b = sub->add_input("y", ValueKind::Tensor, f32({2}));
    Node* add = sub->create_node(OpName::parse("aten.add.Tensor"),
                                 {{"self", Argument::tensor(a)}, {"other", Argument::tensor(b)}},
                                 {{"add", ValueKind::Tensor, f32({2})}});
    sub->set_outputs({add->output()});
    seg = g.create_node(
        engine_segment_op(),
        {{segment_input_name(0), Argument::tensor(x)}, {segment_input_name(1), Argument::tensor(y)}},
        {{"add", ValueKind::Tensor, f32({2})}}, nullptr, "_run_on_acc_0");
    seg->set_subgraph(sub);
    seg->mutable_metadata()[kSegmentBackendKey] = "cpu";
    g.set_outputs({seg->output()});
  }
};

TEST(Segment, IdentityIsTheKilnEngineSegmentTarget) {
  Segmented s;
  EXPECT_EQ(engine_segment_op().to_string(), "kiln.engine_segment.default");
  EXPECT_TRUE(is_engine_segment(*s.seg));
  EXPECT_EQ(segment_backend(*s.seg), "cpu");
  Node* relu = s.g.create_node(OpName::parse("aten.relu.default"), {{"self", Argument::tensor(s.x)}},
                               {{"relu", ValueKind::Tensor, f32({2})}});
  EXPECT_FALSE(is_engine_segment(*relu));
  EXPECT_EQ(segment_backend(*relu), "");
  Node* other_overload = s.g.create_node(OpName{"kiln", "engine_segment", "other"}, {}, {});
  EXPECT_FALSE(is_engine_segment(*other_overload));
}

TEST(Segment, InputsAreTheInputArgumentsInOrder) {
  Segmented s;
  EXPECT_EQ(segment_input_name(3), "input_3");
  EXPECT_EQ(segment_inputs(*s.seg), (std::vector<Value*>{s.x, s.y}));
}

TEST(Segment, MalformedSegmentsAreInvalidInputNamingTheSegment) {
  auto expect_invalid = [](const Node& node, const std::string& words) {
    try {
      segment_inputs(node);
      FAIL() << "expected kiln::Error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
      EXPECT_NE(e.message().find("'_run_on_acc_0'"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(words), std::string::npos) << e.message();
    }
  };
  {
    Segmented s;
    s.seg->remove_arg("input_1");
    expect_invalid(*s.seg, "lacks argument 'input_1'");
  }
  {
    Segmented s;
    s.seg->set_arg("input_0", Argument::tensors({s.x, s.y}));
    expect_invalid(*s.seg, "must name one value");
  }
  {
    Segmented s;
    s.seg->set_subgraph(nullptr);
    expect_invalid(*s.seg, "has no subgraph");
  }
}

}  // namespace
}  // namespace kiln::ir
