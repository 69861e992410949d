#pragma once
// Shared helpers of the partitioning tests: a registry of stub converters and IR text parsing.

#include <memory>
#include <string>
#include <vector>

#include "kiln/conversion/registry.h"
#include "kiln/ir/text.h"

namespace kiln::partitioning::testing {

/// A converter that is never called (partitioning only asks whether one exists).
inline conversion::ConverterImpl stub_converter() {
  return [](conversion::ConversionContext&, const ir::Node&, const conversion::ConverterArgs&) {
    return std::vector<engine::Tensor*>{};
  };
}

/// Registers a stub converter for each key, tagging it with registry name `tag`.
inline void register_stubs(conversion::ConverterRegistry& registry, const std::vector<std::string>& keys,
                           const std::string& tag = "test") {
  for (const std::string& key : keys) {
    conversion::RegistrationOptions options;
    options.registry_name = tag;
    registry.register_converter(key, stub_converter(), options);
  }
}

inline std::unique_ptr<ir::Graph> parse(const std::string& text) { return ir::parse_graph(text); }

}  // namespace kiln::partitioning::testing

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "kiln/ir/verifier.h"
#include "kiln/partitioning/segments.h"

namespace kiln::partitioning::testing {

/// The reference pages' example: add, mul, div on inputs; an op without a converter (the pages' lgamma, which
/// Kiln converts; here special_airy_ai, which no model uses and no inference engine has a layer for) of x, y
/// and the div; cat of the results, written in the interleaved order where a naive linear walk makes 7
/// segments.
inline const char* kThreeVsSeven = R"(graph(%x: f32[4], %y: f32[4]) {
  %add: f32[4] = aten.add.Tensor(self=%x, other=%y, alpha=1)
  %lx: f32[4] = aten.special_airy_ai.default(x=%x)
  %mul: f32[4] = aten.mul.Tensor(self=%x, other=%y)
  %ly: f32[4] = aten.special_airy_ai.default(x=%y)
  %div: f32[4] = aten.div.Tensor(self=%add, other=%mul)
  %ld: f32[4] = aten.special_airy_ai.default(x=%div)
  %cat: f32[24] = aten.cat.default(tensors=[%add, %mul, %div, %lx, %ly, %ld], dim=0)
  return (%cat)
}
)";

/// Checks that `partitioned` is well formed and, flattened, holds every node of `original` exactly once with
/// the same target, arguments and outputs, and the same graph outputs: the same function, structurally.
inline void expect_same_function(const ir::Graph& original, const ir::Graph& partitioned) {
  ir::verify(partitioned);
  std::unique_ptr<ir::Graph> flat = flatten_partitions(partitioned);
  ir::verify(*flat);
  std::map<std::string, int> seen;
  for (const ir::Node* n : flat->nodes()) ++seen[n->name()];
  ASSERT_EQ(seen.size(), original.num_nodes());
  for (const ir::Node* n : original.nodes()) {
    EXPECT_EQ(seen[n->name()], 1) << n->name();
    const ir::Node* f = flat->find_node(n->name());
    ASSERT_NE(f, nullptr) << n->name();
    EXPECT_EQ(f->target(), n->target());
    ASSERT_EQ(f->args().size(), n->args().size());
    for (size_t i = 0; i < n->args().size(); ++i) {
      EXPECT_EQ(f->args()[i].value.to_string(), n->args()[i].value.to_string()) << n->name();
    }
    ASSERT_EQ(f->outputs().size(), n->outputs().size());
    for (size_t i = 0; i < n->outputs().size(); ++i) EXPECT_EQ(f->outputs()[i]->name(), n->outputs()[i]->name());
  }
  ASSERT_EQ(flat->outputs().size(), original.outputs().size());
  for (size_t i = 0; i < original.outputs().size(); ++i) {
    EXPECT_EQ(flat->outputs()[i]->name(), original.outputs()[i]->name());
  }
}

/// Segment summary "name:node,node|..." for compact structural expectations.
inline std::string summary(const ir::Graph& partitioned) {
  std::string s;
  for (const SegmentInfo& seg : describe_segments(partitioned)) {
    if (!s.empty()) s += " | ";
    s += seg.name + ":";
    for (size_t i = 0; i < seg.nodes.size(); ++i) s += (i ? "," : "") + seg.nodes[i];
  }
  return s;
}

}  // namespace kiln::partitioning::testing
