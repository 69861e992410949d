// Partitioning a flat graph as another partitioned graph is partitioned (refit's segment-by-segment check).

#include <unordered_map>

#include "builder.h"
#include "kiln/partitioning/segments.h"
#include "kiln/support/error.h"

namespace kiln::partitioning {

std::unique_ptr<ir::Graph> partition_like(const ir::Graph& graph, const ir::Graph& partitioned) {
  std::unordered_map<std::string, const ir::Node*> by_name;
  for (const ir::Node* n : graph.nodes()) by_name.emplace(n->name(), n);
  size_t planned = 0;
  auto take = [&](const std::string& name, const std::string& where) {
    auto it = by_name.find(name);
    KILN_CHECK(it != by_name.end(), InvalidInput, "node '", name, "' (", where,
               ") of the compiled module is not in the new program");
    ++planned;
    return it->second;
  };
  std::vector<PlannedSegment> plan;
  for (const ir::Node* node : partitioned.nodes()) {
    if (!ir::is_engine_segment(*node)) {
      plan.push_back(PlannedSegment{false, "", false, {take(node->name(), "run in PyTorch")}});
      continue;
    }
    KILN_CHECK(node->subgraph() != nullptr, InvalidInput, "engine segment '", node->name(), "' has no subgraph");
    PlannedSegment seg{true, ir::segment_backend(*node), false, {}};
    for (const ir::Node* inner : node->subgraph()->nodes()) {
      seg.nodes.push_back(take(inner->name(), "in engine segment '" + node->name() + "'"));
    }
    plan.push_back(std::move(seg));
  }
  if (planned != graph.num_nodes()) {
    std::unordered_map<std::string, bool> known;
    for (const ir::Node* node : partitioned.nodes()) {
      known[node->name()] = true;
      if (node->subgraph()) {
        for (const ir::Node* inner : node->subgraph()->nodes()) known[inner->name()] = true;
      }
    }
    for (const ir::Node* n : graph.nodes()) {
      KILN_CHECK(known.count(n->name()), InvalidInput, "node '", n->name(), "' (", n->target().to_string(),
                 ") of the new program is not in the compiled module");
    }
  }
  try {
    return build_partitioned_graph(graph, plan);
  } catch (const Error& e) {
    throw Error(ErrorKind::InvalidInput, "the new program's data dependencies do not fit the compiled module's "
                "segments: " + e.message());
  }
}

}  // namespace kiln::partitioning
