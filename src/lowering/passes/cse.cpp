// Common-subexpression elimination: two pure nodes with the same target and the same arguments compute the
// same values, so the later one's outputs are replaced by the earlier one's.

#include <unordered_map>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

std::string key_of(const ir::Node& node) {
  std::string key = node.target().to_string();
  for (const auto& a : node.args()) key += "|" + a.name + "=" + a.value.to_string();
  return key;
}

bool run_cse(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  std::unordered_map<std::string, ir::Node*> seen;
  for (ir::Node* node : graph.nodes()) {
    if (node->outputs().empty() || detail::has_side_effects(*node) || detail::is_random(*node)) continue;
    const std::string key = key_of(*node);
    auto [it, inserted] = seen.emplace(key, node);
    if (inserted) continue;
    ir::Node* first = it->second;
    if (first->outputs().size() != node->outputs().size()) continue;
    bool same_meta = true;
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      same_meta &= first->output(i)->kind() == node->output(i)->kind() &&
                   (!node->output(i)->is_tensor() || first->output(i)->meta() == node->output(i)->meta());
    }
    if (!same_meta) continue;
    detail::replace_node(graph, node, first->outputs());
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_cse_pass() {
  return std::make_shared<FunctionPass>("cse", "Merges identical pure nodes (common-subexpression elimination).",
                                        run_cse);
}

}  // namespace kiln::lowering
