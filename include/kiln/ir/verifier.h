#pragma once
// The IR verifier: structural invariants every pass must keep.

#include "kiln/ir/graph.h"

namespace kiln::ir {

/// Checks: every value used is defined before use (inputs, constants, earlier nodes); names are unique;
/// node outputs point back at their node; graph outputs exist; tensor arguments are tensor values; SymInt
/// arguments are SymInt values; nested subgraphs verify too. Throws kiln::Error(Internal) naming the node and
/// value on the first violation.
void verify(const Graph& graph);

}  // namespace kiln::ir
