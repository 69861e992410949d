#pragma once
// The partitioners: each returns a new partitioned graph (segments.h describes its form) and the capability
// overview it was based on.
//
// All honour settings.min_block_size (engine segments with fewer compute nodes, see is_compute_node, go back to
// PyTorch unless require_full_compilation), settings.torch_executed_ops (through is_node_supported) and
// settings.require_full_compilation (kiln::Error(Unsupported) listing every unsupported node and its reason),
// and never cut an atomic subgraph (atomic_subgraphs.h) whose nodes all run on one side.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/settings/compilation_settings.h"
#include "kiln/conversion/registry.h"
#include "kiln/ir/graph.h"
#include "kiln/partitioning/capability.h"

namespace kiln::partitioning {

struct PartitionResult {
  std::unique_ptr<ir::Graph> graph;
  GraphSupport support;
};

/// Adjacency partitioning (default): a topological walk that keeps one segment of the current kind open and
/// adds every node of that kind whose producers are placed, switching kind only when none is ready; so
/// supported nodes that only depend on each other or on earlier segments share a segment. Atomic subgraphs
/// move as one unit.
PartitionResult fast_partition(const ir::Graph& graph, const settings::CompilationSettings& settings,
                               const conversion::ConverterRegistry& registry = conversion::converters());

/// Global partitioning: merges supported nodes (users first, then any two partitions) whenever the merged
/// partition creates no cycle through PyTorch nodes, then orders partitions and PyTorch nodes to minimize the
/// number of engine/PyTorch transitions.
PartitionResult global_partition(const ir::Graph& graph, const settings::CompilationSettings& settings,
                                 const conversion::ConverterRegistry& registry = conversion::converters());

/// Whether a backend can run a node.
using BackendSupport = std::function<bool(const ir::Node&)>;

/// Multi-backend adjacency partitioning: each node goes to the highest-priority backend (order of
/// `backend_priority`) whose support accepts it and that is not excluded by torch_executed_ops or impurity;
/// nodes no backend accepts stay in PyTorch. Segments are named "_run_on_acc_<backend>_<k>".
PartitionResult hierarchical_adjacency_partition(const ir::Graph& graph,
                                                 const std::map<std::string, BackendSupport>& backend_support_map,
                                                 const std::vector<std::string>& backend_priority,
                                                 const settings::CompilationSettings& settings);
/// A BackendSupport that accepts the nodes the registry can convert (is_node_supported).
BackendSupport registry_backend_support(const settings::CompilationSettings& settings,
                                        const conversion::ConverterRegistry& registry = conversion::converters());
/// A BackendSupport that accepts nodes whose target is in `ops` (overloads or packets).
BackendSupport op_set_backend_support(std::set<std::string> ops);

/// Splits engine segments of a partitioned graph whose weights exceed the per-engine budget
/// (`cpu_memory_budget`, or MemAvailable / 4 when unset) into consecutive pieces that fit, never cutting an
/// atomic subgraph (a cut inside one moves to the side holding most of its nodes). A single unit bigger than
/// the budget becomes its own segment.
std::unique_ptr<ir::Graph> resource_partition(const ir::Graph& partitioned, std::optional<int64_t> cpu_memory_budget);
/// The default per-engine budget: MemAvailable from /proc/meminfo divided by 4 (8 GiB / 4 if unreadable).
int64_t default_cpu_memory_budget();

/// The compiler's entry point: fast_partition when settings.use_fast_partitioner (falling back to
/// global_partition when it fails with an internal error), else global_partition; then resource_partition when
/// settings.enable_resource_partitioning.
PartitionResult partition(const ir::Graph& graph, const settings::CompilationSettings& settings,
                          const conversion::ConverterRegistry& registry = conversion::converters());

}  // namespace kiln::partitioning
