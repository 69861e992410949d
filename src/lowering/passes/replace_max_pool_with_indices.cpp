// Replaces max_pool{1,2,3}d_with_indices by max_pool{1,2,3}d when nothing reads the indices (Core ATen
// exports the indexed form even for plain max pooling).

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

bool run_replace_max_pool(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    const std::string& name = node->target().name;
    if (node->target().ns != "aten" ||
        (name != "max_pool1d_with_indices" && name != "max_pool2d_with_indices" &&
         name != "max_pool3d_with_indices")) {
      continue;
    }
    if (node->outputs().size() > 1) {
      ir::Value* indices = node->output(1);
      if (graph.is_output(indices) || !graph.users(indices).empty()) continue;
    }
    const std::string target = "aten." + name.substr(0, name.size() - std::string("_with_indices").size()) +
                               ".default";
    ir::Value* out = detail::emit(graph, node, target, node->args(), node->output(0)->meta(),
                                  target.substr(5, target.size() - 13));
    detail::replace_node(graph, node, {out});
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_replace_max_pool_with_indices_pass() {
  return std::make_shared<FunctionPass>(
      "replace_max_pool_with_indices", "Replaces max_poolNd_with_indices by max_poolNd when the indices are unused.",
      run_replace_max_pool);
}

}  // namespace kiln::lowering
