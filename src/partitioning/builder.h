#pragma once
// Internal: turns an ordered list of planned segments into a partitioned graph (segments.h describes it).

#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::partitioning {

struct PlannedSegment {
  bool engine = false;
  /// Backend of an engine segment.
  std::string backend;
  /// Name the segment "_run_on_acc_<backend>_<k>" instead of "_run_on_acc_<k>".
  bool tag_backend = false;
  /// Nodes of `graph` (top level), in program order.
  std::vector<const ir::Node*> nodes;
};

/// Builds the partitioned graph. Every node of `graph` must be in exactly one segment, and every segment's
/// producers must lie in itself or in earlier segments (throws kiln::Error(Internal) otherwise).
std::unique_ptr<ir::Graph> build_partitioned_graph(const ir::Graph& graph, const std::vector<PlannedSegment>& plan);

}  // namespace kiln::partitioning
