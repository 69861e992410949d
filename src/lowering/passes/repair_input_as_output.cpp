// Engines cannot return a graph input as an output; a clone is inserted where a graph input is also a graph
// output (remove_noop_ops keeps such clones).

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

bool run_repair(ir::Graph& graph, const PassContext&) {
  std::vector<ir::Value*> outputs = graph.outputs();
  bool changed = false;
  for (ir::Value*& out : outputs) {
    if (out->role() != ir::ValueRole::Input || !out->is_tensor()) continue;
    const auto nodes = graph.nodes();
    ir::Node* first = nodes.empty() ? nullptr : nodes.front();
    out = detail::emit(graph, first, "aten.clone.default",
                       {detail::named("self", ir::Argument::tensor(out)),
                        detail::named("memory_format", ir::Argument::none(), true)},
                       out->meta(), out->name() + "_clone");
    changed = true;
  }
  if (changed) graph.set_outputs(std::move(outputs));
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_repair_input_as_output_pass() {
  return std::make_shared<FunctionPass>("repair_input_as_output",
                                        "Inserts a clone where a graph input is also a graph output.", run_repair);
}

}  // namespace kiln::lowering
