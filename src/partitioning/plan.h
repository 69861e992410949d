#pragma once
// Internal: the node DAG, fusion units and the labelling machinery shared by the partitioners.
//
// A label says where a node runs: -1 is PyTorch, 0.. an engine backend (index into the backend list).

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "builder.h"
#include "kiln/settings/compilation_settings.h"
#include "kiln/ir/graph.h"

namespace kiln::partitioning {

inline constexpr int kTorchLabel = -1;

/// Top-level nodes in program order with their data dependencies (deduplicated).
struct NodeDag {
  explicit NodeDag(const ir::Graph& graph);
  std::vector<const ir::Node*> nodes;
  std::unordered_map<const ir::Node*, size_t> index;
  std::vector<std::vector<size_t>> preds;
  std::vector<std::vector<size_t>> succs;
};

/// Nodes grouped into units: an atomic subgraph match whose nodes share one label is one unit, every other
/// node its own unit. Units are numbered by their first node; `key` is that node's index.
struct Units {
  std::vector<std::vector<size_t>> members;  // node indices, ascending
  std::vector<size_t> unit_of;               // per node
  std::vector<int> label;
  std::vector<size_t> key;                   // first member (program order)
  std::vector<size_t> last;                  // last member
  std::vector<std::vector<size_t>> preds;
  std::vector<std::vector<size_t>> succs;
};
Units make_units(const ir::Graph& graph, const NodeDag& dag, const std::vector<int>& labels);

/// A segment as a label and unit list.
struct UnitSegment {
  int label = kTorchLabel;
  std::vector<size_t> units;
};

/// The adjacency walk (fast and hierarchical partitioners).
std::vector<UnitSegment> adjacency_segments(const Units& units);
/// The global grouping (global partitioner).
std::vector<UnitSegment> global_segments(const Units& units);

/// Runs `algorithm` on the labels, then gives engine segments with fewer than min_block_size compute nodes
/// back to PyTorch and repeats until none is too small (not when require_full_compilation). Returns the plan.
std::vector<PlannedSegment> plan_segments(
    const ir::Graph& graph, const NodeDag& dag, std::vector<int> labels, const settings::CompilationSettings& settings,
    const std::function<std::vector<UnitSegment>(const Units&)>& algorithm,
    const std::vector<std::string>& backends, bool tag_backend);

}  // namespace kiln::partitioning
