// Building the partitioned graph from a plan.

#include "builder.h"

#include <unordered_map>

#include "kiln/ir/graph_extract.h"
#include "kiln/partitioning/segments.h"
#include "kiln/support/error.h"

namespace kiln::partitioning {
namespace {

std::string segment_name(const PlannedSegment& s, size_t k) {
  if (!s.engine) return "_run_on_gpu_" + std::to_string(k);
  if (s.tag_backend) return "_run_on_acc_" + s.backend + "_" + std::to_string(k);
  return "_run_on_acc_" + std::to_string(k);
}

}  // namespace

std::unique_ptr<ir::Graph> build_partitioned_graph(const ir::Graph& graph, const std::vector<PlannedSegment>& plan) {
  std::unordered_map<const ir::Node*, size_t> segment_of;
  for (size_t i = 0; i < plan.size(); ++i) {
    for (const ir::Node* n : plan[i].nodes) {
      KILN_CHECK(segment_of.emplace(n, i).second, Internal, "partitioning: node '", n->name(),
                 "' is planned in two segments");
    }
  }
  KILN_CHECK(segment_of.size() == graph.num_nodes(), Internal, "partitioning: the plan covers ", segment_of.size(),
             " of ", graph.num_nodes(), " nodes");
  const ir::UseMap uses(graph);

  auto out = std::make_unique<ir::Graph>();
  ir::copy_symbols(*out, graph);
  ir::ValueMap map;
  for (const ir::Value* in : graph.inputs()) map[in] = ir::copy_as_input(*out, *in);
  // Constants stay in the parent when PyTorch nodes or the graph outputs read them (or nothing does).
  for (const ir::Value* c : graph.constants()) {
    const std::vector<ir::Node*>& users = uses.users(c);
    bool parent = graph.is_output(c) || users.empty();
    for (const ir::Node* u : users) parent = parent || !plan[segment_of.at(u)].engine;
    if (parent) map[c] = ir::copy_constant(*out, *c);
  }

  for (size_t k = 0; k < plan.size(); ++k) {
    const PlannedSegment& seg = plan[k];
    const std::string name = segment_name(seg, k);
    if (!seg.engine) {
      for (const ir::Node* n : seg.nodes) {
        ir::Node* copy = ir::copy_node(*out, *n, map);
        copy->mutable_metadata()[ir::kSegmentRunKey] = name;
      }
      continue;
    }
    ir::ExtractedGraph sub = ir::extract_subgraph(graph, seg.nodes, uses);
    std::vector<ir::NamedArgument> args;
    for (size_t i = 0; i < sub.inputs.size(); ++i) {
      args.push_back({ir::segment_input_name(i), ir::argument_for(ir::mapped(map, sub.inputs[i])), false});
    }
    std::vector<ir::OutputSpec> specs;
    for (const ir::Value* v : sub.outputs) specs.push_back({v->name(), v->kind(), v->meta()});
    ir::Node* node = out->create_node(ir::engine_segment_op(), std::move(args), std::move(specs), nullptr,
                                      out->unique_name(name));
    node->set_subgraph(std::move(sub.graph));
    node->mutable_metadata()[ir::kSegmentBackendKey] = seg.backend;
    for (size_t i = 0; i < sub.outputs.size(); ++i) {
      node->outputs()[i]->set_sym_value(sub.outputs[i]->sym_value());
      map[sub.outputs[i]] = node->outputs()[i];
    }
  }
  ir::copy_outputs(*out, graph, map);
  return out;
}

}  // namespace kiln::partitioning
