// Removes pure nodes none of whose outputs is read (by a node or as a graph output). In-place, random and
// effectful nodes stay.

#include <algorithm>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

bool run_remove_dead(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  std::vector<ir::Node*> nodes = graph.nodes();
  // Walking backwards removes whole dead chains in one run.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    ir::Node* node = *it;
    if (detail::has_side_effects(*node)) continue;
    const bool dead = std::none_of(node->outputs().begin(), node->outputs().end(), [&](ir::Value* out) {
      return graph.is_output(out) || !graph.users(out).empty();
    });
    if (!dead) continue;
    graph.erase_node(node);
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_remove_num_users_is_0_nodes_pass() {
  return std::make_shared<FunctionPass>("remove_num_users_is_0_nodes", "Removes pure nodes whose outputs are unused.",
                                        run_remove_dead);
}

}  // namespace kiln::lowering
