// Building the partitioned graph from a plan.

#include "builder.h"

#include <unordered_map>
#include <unordered_set>

#include "graph_copy.h"
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
  copy_symbols(*out, graph);
  ValueMap map;
  for (const ir::Value* in : graph.inputs()) map[in] = copy_as_input(*out, *in);
  // Constants stay in the parent when PyTorch nodes or the graph outputs read them (or nothing does).
  for (const ir::Value* c : graph.constants()) {
    const std::vector<ir::Node*>& users = uses.users(c);
    bool parent = graph.is_output(c) || users.empty();
    for (const ir::Node* u : users) parent = parent || !plan[segment_of.at(u)].engine;
    if (parent) map[c] = copy_constant(*out, *c);
  }

  for (size_t k = 0; k < plan.size(); ++k) {
    const PlannedSegment& seg = plan[k];
    const std::string name = segment_name(seg, k);
    if (!seg.engine) {
      for (const ir::Node* n : seg.nodes) {
        ir::Node* copy = copy_node(*out, *n, map);
        copy->mutable_metadata()[ir::kSegmentRunKey] = name;
      }
      continue;
    }
    std::unordered_set<const ir::Node*> members(seg.nodes.begin(), seg.nodes.end());
    std::vector<const ir::Value*> inputs, constants, outputs;
    std::unordered_set<const ir::Value*> seen;
    for (const ir::Node* n : seg.nodes) {
      for (const ir::Value* v : n->inputs()) {
        if (!seen.insert(v).second) continue;
        if (v->role() == ir::ValueRole::Constant) {
          constants.push_back(v);
        } else if (v->producer() == nullptr || !members.count(v->producer())) {
          inputs.push_back(v);
        }
      }
    }
    for (const ir::Node* n : seg.nodes) {
      for (const ir::Value* v : n->outputs()) {
        bool external = graph.is_output(v);
        for (const ir::Node* u : uses.users(v)) external = external || !members.count(u);
        if (external) outputs.push_back(v);
      }
    }
    auto sub = std::make_shared<ir::Graph>();
    copy_symbols(*sub, graph);
    ValueMap sub_map;
    for (const ir::Value* v : inputs) sub_map[v] = copy_as_input(*sub, *v);
    for (const ir::Value* c : constants) sub_map[c] = copy_constant(*sub, *c);
    for (const ir::Node* n : seg.nodes) copy_node(*sub, *n, sub_map);
    std::vector<ir::Value*> sub_outputs;
    for (const ir::Value* v : outputs) sub_outputs.push_back(mapped(sub_map, v));
    sub->set_outputs(std::move(sub_outputs));

    std::vector<ir::NamedArgument> args;
    for (size_t i = 0; i < inputs.size(); ++i) {
      args.push_back({ir::segment_input_name(i), argument_for(mapped(map, inputs[i])), false});
    }
    std::vector<ir::OutputSpec> specs;
    for (const ir::Value* v : outputs) specs.push_back({v->name(), v->kind(), v->meta()});
    ir::Node* node = out->create_node(ir::engine_segment_op(), std::move(args), std::move(specs), nullptr,
                                      out->unique_name(name));
    node->set_subgraph(std::move(sub));
    node->mutable_metadata()[ir::kSegmentBackendKey] = seg.backend;
    for (size_t i = 0; i < outputs.size(); ++i) {
      node->outputs()[i]->set_sym_value(outputs[i]->sym_value());
      map[outputs[i]] = node->outputs()[i];
    }
  }
  std::vector<ir::Value*> outs;
  for (const ir::Value* v : graph.outputs()) outs.push_back(mapped(map, v));
  out->set_outputs(std::move(outs));
  return out;
}

}  // namespace kiln::partitioning
