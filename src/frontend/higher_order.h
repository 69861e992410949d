#pragma once
// Inlining of the higher-order ops that only wrap a region: wrap_with_set_grad_enabled (torch.no_grad() or
// enable_grad() around a region, as HF rotary embeddings have) and wrap_with_autocast (torch.autocast around
// a region). For inference both are plain code: their subgraph's nodes replace the wrapper.

#include "kiln/ir/graph.h"

namespace kiln::frontend {

/// Replaces every wrap_with_set_grad_enabled / wrap_with_autocast node of `graph` by the nodes of its nested
/// graph (fresh names where they would clash). Nodes from an autocast region carry ir::kAutocastKey. A
/// wrapper whose operands are not plain values, or whose outputs do not match its subgraph's, stays as it is
/// (the runtime runs it in PyTorch). Returns the number of wrappers inlined.
size_t inline_higher_order_wrappers(ir::Graph& graph);

}  // namespace kiln::frontend
