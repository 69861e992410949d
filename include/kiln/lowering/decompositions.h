#pragma once
// Decompositions: rewrites of one op into simpler (Core ATen) ops, kept in one registration table
// (src/lowering/decompositions/decomposition_table.cpp).

#include <set>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/lowering/pass.h"

namespace kiln::lowering {

/// One decomposition. `apply` inserts the replacement nodes before `node`, redirects the node's outputs and
/// erases it; it returns false (leaving the graph untouched) when it cannot handle this instance (for
/// example a dynamic size it needs static).
struct Decomposition {
  std::string name;
  std::vector<std::string> targets;  // "aten.silu.default", ...
  bool (*apply)(ir::Graph& graph, ir::Node* node);
};

/// Every decomposition, in table order.
const std::vector<Decomposition>& decompositions();

/// Op packets ("aten.softmax") the engine has fused layers for: never decomposed by default.
const std::set<std::string>& keep_whole_ops();

/// Whether the decomposition of `node` should apply under `context`: experimental decompositions on, or
/// the op is outside the keep-whole set and no converter takes it.
bool should_decompose(const ir::Node& node, const PassContext& context);

}  // namespace kiln::lowering
