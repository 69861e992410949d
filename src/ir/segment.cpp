// The engine segment node's identity and its inputs.

#include "kiln/ir/segment.h"

#include "kiln/support/error.h"

namespace kiln::ir {

OpName engine_segment_op() { return OpName{"kiln", "engine_segment", "default"}; }

bool is_engine_segment(const Node& node) { return node.target() == engine_segment_op(); }

std::string segment_backend(const Node& node) {
  auto it = node.metadata().find(kSegmentBackendKey);
  return it == node.metadata().end() ? std::string() : it->second;
}

std::string segment_input_name(size_t index) { return "input_" + std::to_string(index); }

std::vector<Value*> segment_inputs(const Node& segment) {
  KILN_CHECK(segment.subgraph() != nullptr, InvalidInput, "engine segment '", segment.name(),
             "' has no subgraph");
  std::vector<Value*> inputs;
  for (size_t i = 0; i < segment.subgraph()->inputs().size(); ++i) {
    const Argument* arg = segment.find_arg(segment_input_name(i));
    KILN_CHECK(arg != nullptr, InvalidInput, "engine segment '", segment.name(), "' lacks argument '",
               segment_input_name(i), "'");
    std::vector<Value*> values = arg->values();
    KILN_CHECK(values.size() == 1, InvalidInput, "engine segment '", segment.name(), "' argument '",
               segment_input_name(i), "' must name one value");
    inputs.push_back(values[0]);
  }
  return inputs;
}

}  // namespace kiln::ir
