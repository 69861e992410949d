// Removes runtime assertions and metadata-only nodes: they check what the exporter already proved and have
// no value that later ops read.

#include <set>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

bool run_remove_asserts(ir::Graph& graph, const PassContext&) {
  static const std::set<std::string> kNames = {
      "_assert_tensor_metadata", "_assert_scalar", "_assert_async", "sym_constrain_range",
      "sym_constrain_range_for_size", "_functional_assert_async", "_functional_assert_scalar",
      "_functional_sym_constrain_range", "_functional_sym_constrain_range_for_size", "_assert"};
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (kNames.count(node->target().name) == 0) continue;
    // Functional asserts return a dependency token; drop them only when nothing reads it.
    bool used = false;
    for (ir::Value* out : node->outputs()) used |= graph.is_output(out) || !graph.users(out).empty();
    if (used) continue;
    graph.erase_node(node);
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_remove_assert_nodes_pass() {
  return std::make_shared<FunctionPass>(
      "remove_assert_nodes", "Removes _assert_tensor_metadata, _assert_scalar, _assert_async, sym_constrain_range*.",
      run_remove_asserts);
}

}  // namespace kiln::lowering
