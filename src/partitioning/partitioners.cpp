// The partitioner entry points: labelling, require_full_compilation, fast/global/hierarchical and dispatch.

#include "kiln/partitioning/partitioners.h"

#include <sstream>

#include "builder.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "plan.h"

namespace kiln::partitioning {
namespace {

[[noreturn]] void fail_full_compilation(const std::vector<UnsupportedNode>& unsupported) {
  std::ostringstream msg;
  msg << "require_full_compilation is set but " << unsupported.size() << " node"
      << (unsupported.size() == 1 ? " is" : "s are") << " not supported: ";
  for (size_t i = 0; i < unsupported.size(); ++i) {
    msg << (i ? "; " : "") << unsupported[i].node << " (" << unsupported[i].op << "): " << unsupported[i].reason;
  }
  KILN_FAIL(Unsupported, msg.str());
}

PartitionResult run_single_backend(const ir::Graph& graph, const settings::CompilationSettings& settings,
                                   const conversion::ConverterRegistry& registry,
                                   std::vector<UnitSegment> (*algorithm)(const Units&)) {
  PartitionResult result;
  result.support = get_graph_converter_support(graph, settings, registry);
  if (settings.require_full_compilation && !result.support.unsupported.empty()) {
    fail_full_compilation(result.support.unsupported);
  }
  const NodeDag dag(graph);
  std::vector<int> labels(dag.nodes.size(), 0);
  for (size_t i = 0; i < dag.nodes.size(); ++i) {
    if (!is_node_supported(*dag.nodes[i], settings, registry).supported) labels[i] = kTorchLabel;
  }
  std::vector<PlannedSegment> plan =
      plan_segments(graph, dag, std::move(labels), settings, algorithm, {settings.backend}, false);
  result.graph = build_partitioned_graph(graph, plan);
  return result;
}

}  // namespace

PartitionResult fast_partition(const ir::Graph& graph, const settings::CompilationSettings& settings,
                               const conversion::ConverterRegistry& registry) {
  return run_single_backend(graph, settings, registry, adjacency_segments);
}

PartitionResult global_partition(const ir::Graph& graph, const settings::CompilationSettings& settings,
                                 const conversion::ConverterRegistry& registry) {
  return run_single_backend(graph, settings, registry, global_segments);
}

BackendSupport registry_backend_support(const settings::CompilationSettings& settings,
                                        const conversion::ConverterRegistry& registry) {
  return [settings, &registry](const ir::Node& node) { return is_node_supported(node, settings, registry).supported; };
}

BackendSupport op_set_backend_support(std::set<std::string> ops) {
  return [ops = std::move(ops)](const ir::Node& node) { return ir::op_in_set(node.target(), ops); };
}

PartitionResult hierarchical_adjacency_partition(const ir::Graph& graph,
                                                 const std::map<std::string, BackendSupport>& backend_support_map,
                                                 const std::vector<std::string>& backend_priority,
                                                 const settings::CompilationSettings& settings) {
  for (const std::string& b : backend_priority) {
    KILN_CHECK(backend_support_map.count(b), InvalidInput, "hierarchical partitioning: backend '", b,
               "' in backend_priority has no entry in backend_support_map");
  }
  PartitionResult result;
  const NodeDag dag(graph);
  std::vector<int> labels(dag.nodes.size(), kTorchLabel);
  for (size_t i = 0; i < dag.nodes.size(); ++i) {
    const ir::Node& node = *dag.nodes[i];
    const std::string op = ir::canonical_op_name(node.target());
    OpSupport& per = result.support.per_op[op];
    ++result.support.total;
    std::string reason;
    SupportStatus status = SupportStatus::NoConverter;
    if (ir::op_in_set(node.target(), settings.torch_executed_ops)) {
      status = SupportStatus::TorchExecuted;
      reason = op + " is in torch_executed_ops";
    } else if (is_impure_op(node.target())) {
      status = SupportStatus::Impure;
      reason = op + " has side effects (impure) and stays in PyTorch";
    } else {
      for (size_t b = 0; b < backend_priority.size(); ++b) {
        if (backend_support_map.at(backend_priority[b])(node)) {
          labels[i] = static_cast<int>(b);
          break;
        }
      }
      reason = "no backend supports " + op;
    }
    if (labels[i] != kTorchLabel) {
      ++result.support.supported;
      ++per.supported;
    } else {
      ++per.unsupported;
      if (per.reason.empty()) per.reason = reason;
      result.support.unsupported.push_back({node.name(), op, status, reason});
    }
  }
  if (settings.require_full_compilation && !result.support.unsupported.empty()) {
    fail_full_compilation(result.support.unsupported);
  }
  std::vector<PlannedSegment> plan =
      plan_segments(graph, dag, std::move(labels), settings, adjacency_segments, backend_priority, true);
  result.graph = build_partitioned_graph(graph, plan);
  return result;
}

PartitionResult partition(const ir::Graph& graph, const settings::CompilationSettings& settings,
                          const conversion::ConverterRegistry& registry) {
  PartitionResult result;
  if (settings.use_fast_partitioner) {
    try {
      result = fast_partition(graph, settings, registry);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Internal) throw;
      KILN_LOG(Warning, "fast partitioner failed (", e.what(), "); falling back to the global partitioner");
      result = global_partition(graph, settings, registry);
    }
  } else {
    result = global_partition(graph, settings, registry);
  }
  if (settings.enable_resource_partitioning) {
    result.graph = resource_partition(*result.graph, settings.cpu_memory_budget);
  }
  return result;
}

}  // namespace kiln::partitioning
