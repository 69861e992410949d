#pragma once
// Dtype inference at load: for the ops whose result type torch fixes from their inputs and arguments (pointwise
// arithmetic with type promotion, comparisons, index-producing ops, explicit dtype arguments, ops that keep their
// input's type), the dtype a node's first output must have, checked against what model.json declares. An
// edited or inconsistent program (an output declared int32 that computes float32) is rejected instead of
// compiling into a module that disagrees with torch. Ops without a rule here are not checked.

#include <optional>
#include <string>

#include "kiln/ir/graph.h"

namespace kiln::frontend {

/// The dtype torch gives output 0 of `node`, when a rule covers the op and its inputs' dtypes are declared.
std::optional<DType> infer_output_dtype(const ir::Node& node);

/// Throws kiln::Error(InvalidInput) naming the node, its output and both dtypes when a node's declared output
/// dtype differs from infer_output_dtype (nodes of subgraphs and nested graphs included; nodes of autocast regions
/// and nodes with unreadable arguments are not checked).
void check_declared_dtypes(const ir::Graph& graph);

}  // namespace kiln::frontend
