#pragma once
// Vocabulary for higher-order ops (torch.ops.higher_order.*: cond, while_loop, map_impl, invoke_subgraph,
// wrap_with_set_grad_enabled, wrap_with_autocast, ...): nodes whose arguments include nested graphs
// (Argument::Kind::Graph), and the node metadata keys the frontend sets on nodes it could not fully read.

#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::ir {

/// Node metadata key: why Kiln could not read one of the node's arguments (an argument kind it has no
/// representation for). Such a node never goes into an engine; it runs in PyTorch if PyTorch can run it.
inline constexpr const char* kUnsupportedArgumentKey = "kiln.unsupported_argument";

/// Node metadata key: the autocast region an inlined node came from, as "<device>:<dtype>" ("cuda:float16")
/// for an enabled region or "<device>:disabled" for a region that turns autocast off (its ops keep the dtype
/// they were exported in).
inline constexpr const char* kAutocastKey = "kiln.autocast";

/// True for torch.ops.higher_order.* operators.
inline bool is_higher_order(const OpName& op) { return op.ns == "higher_order"; }

/// The node's nested graphs, in argument order.
inline std::vector<const Graph*> nested_graphs(const Node& node) {
  std::vector<const Graph*> out;
  for (const NamedArgument& a : node.args()) {
    if (a.value.kind() == Argument::Kind::Graph) out.push_back(a.value.as_graph().get());
  }
  return out;
}

}  // namespace kiln::ir
