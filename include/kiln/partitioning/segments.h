#pragma once
// The partitioned graph's form, shared by partitioning, the runtime and the coverage report.
//
// A partitioned graph is an ir::Graph whose nodes are
//   - engine segments (ir/segment.h: target kiln.engine_segment.default, their nodes in subgraph(), arguments
//     "input_<i>"), named "_run_on_acc_<k>" (or "_run_on_acc_<backend>_<k>" from the hierarchical
//     partitioner). The node's outputs are the subgraph's outputs in order (same names as in the original
//     graph). Weights used by the segment are constants of the subgraph (a weight used by several segments is
//     duplicated, sharing its storage). Metadata ir::kSegmentBackendKey names the backend.
//   - torch nodes: the original nodes, unchanged, with metadata ir::kSegmentRunKey = "_run_on_gpu_<k>" naming
//   the
//     run of consecutive torch nodes they belong to.
// Segments are numbered in program order, engine and torch runs sharing one counter.

#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/segment.h"

namespace kiln::partitioning {

/// One segment of a partitioned graph, in order.
struct SegmentInfo {
  std::string name;
  bool engine = false;
  /// The backend for engine segments; "torch" for torch runs.
  std::string backend;
  /// Node names in order (for engine segments, the subgraph's nodes).
  std::vector<std::string> nodes;
  /// Boundary values: read from outside the segment (inputs) and used outside it or graph outputs (outputs).
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  /// Bytes of the constants the segment holds (engine segments).
  int64_t weight_bytes = 0;
};

/// Lists the segments of a partitioned graph in order (a graph without engine segments gives one torch run).
std::vector<SegmentInfo> describe_segments(const ir::Graph& graph);

/// Inlines every engine segment back into one flat graph: the result has the original nodes and value names
/// and computes the same function. Used to check partitions and by resource partitioning.
std::unique_ptr<ir::Graph> flatten_partitions(const ir::Graph& graph);

/// Partitions the flat `graph` exactly as `partitioned` is partitioned, matching nodes by name: the nodes named
/// as the nodes of each engine segment of `partitioned` form that segment (same backend, same position), every
/// other node runs in PyTorch. Refit uses it to compare a new program with a compiled module segment by
/// segment. Throws kiln::Error(InvalidInput) naming the first node one graph has and the other lacks, or when
/// the segments' order does not fit `graph`'s data dependencies.
std::unique_ptr<ir::Graph> partition_like(const ir::Graph& graph, const ir::Graph& partitioned);

/// Bytes of a constant value's data (or of its static meta when the data is absent).
int64_t constant_bytes(const ir::Value& constant);

}  // namespace kiln::partitioning
