#pragma once
// Argument checks: what a node's arguments must satisfy before anything converts or runs it. One place for
// every path: the frontend checks each node as it loads a program, the interpreter before it calls a converter,
// the libtorch node executor before it calls libtorch (a .kiln module's graph does not come through the
// frontend). So the compiled module refuses exactly what libtorch refuses, and nothing reaches libtorch or a
// kernel library with arguments that would crash it (a SIGFPE on groups = 2^62).

#include "kiln/ir/graph.h"

namespace kiln::frontend {

/// Checks `node`'s arguments: each argument's kind against Kiln's op schema (a string where a float is
/// expected, an int for a str), then its op family's rules on what the arguments and the tensors' metadata show
/// statically: dims in range and not repeated, permutations, list lengths, strides / dilations / groups / kernel
/// sizes positive, padding not negative, groups dividing the channels, operand dtypes agreeing, view sizes
/// multiplying out, normalized_shape matching the trailing dims, dropout p in [0, 1], sizes not negative.
/// Symbolic values are left to run time. Throws kiln::Error(InvalidInput) naming the node, the op and the
/// argument.
void check_node_arguments(const ir::Node& node);

}  // namespace kiln::frontend
