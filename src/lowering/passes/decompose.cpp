// The decomposition pass: applies the decomposition table to every node it should (see should_decompose).

#include <unordered_map>

#include "../rewrite.h"
#include "kiln/lowering/decompositions.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

const std::unordered_map<std::string, const Decomposition*>& by_target() {
  static const auto table = [] {
    std::unordered_map<std::string, const Decomposition*> map;
    for (const Decomposition& d : decompositions()) {
      for (const std::string& t : d.targets) map.emplace(t, &d);
    }
    return map;
  }();
  return table;
}

bool run_decompose(ir::Graph& graph, const PassContext& context) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    auto it = by_target().find(node->target().to_string());
    if (it == by_target().end() || !should_decompose(*node, context)) continue;
    changed |= it->second->apply(graph, node);
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_decompose_pass() {
  return std::make_shared<FunctionPass>(
      "decompose", "Decomposes ops without a converter into Core ATen ops (the decomposition table).",
      run_decompose);
}

}  // namespace kiln::lowering
