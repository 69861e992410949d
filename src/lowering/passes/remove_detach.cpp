// Removes ops that return their input as is (in value semantics): detach, alias, lift_fresh_copy.

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

bool run_remove_detach(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (!detail::is_op_any(*node, {"aten.detach.default", "aten.alias.default", "aten.lift_fresh_copy.default",
                                   "aten.detach_copy.default", "aten.alias_copy.default",
                                   "aten.lift_fresh.default"})) {
      continue;
    }
    ir::Value* input = detail::tensor_arg(*node, "self");
    if (input == nullptr || node->outputs().size() != 1) continue;
    detail::replace_node(graph, node, {input});
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_remove_detach_pass() {
  return std::make_shared<FunctionPass>("remove_detach", "Removes detach, alias and lift_fresh_copy.",
                                        run_remove_detach);
}

}  // namespace kiln::lowering
