#pragma once
// Internal to the compiler: giving engine segments back to PyTorch.

#include <memory>
#include <set>
#include <string>

#include "kiln/ir/graph.h"

namespace kiln::compiler {

/// A copy of the partitioned `graph` in which the engine segments named in `segments` are replaced by their nodes
/// (same names, values and metadata, marked as PyTorch nodes); other nodes and segments are copied unchanged.
std::unique_ptr<ir::Graph> inline_segments(const ir::Graph& graph, const std::set<std::string>& segments);

}  // namespace kiln::compiler
