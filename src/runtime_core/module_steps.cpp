// Splitting a partitioned graph into engine steps and PyTorch runs.

#include "runtime_core/module_steps.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ir/segment.h"
#include "kiln/support/error.h"

namespace kiln::runtime {
namespace {

using ValueMap = std::unordered_map<const ir::Value*, ir::Value*>;

// Copies `src` to the end of `dst`, reading mapped values; records its outputs in `map`.
void copy_node(ir::Graph& dst, const ir::Node& src, ValueMap& map) {
  std::vector<ir::NamedArgument> args = src.args();
  for (ir::NamedArgument& a : args) {
    for (ir::Value* v : a.value.values()) {
      auto it = map.find(v);
      KILN_CHECK(it != map.end(), Internal, "value '", v->name(), "' read by node '", src.name(),
                 "' is not defined before it");
      a.value.replace_value(v, it->second);
    }
  }
  std::vector<ir::OutputSpec> specs;
  for (const ir::Value* out : src.outputs()) specs.push_back({out->name(), out->kind(), out->meta()});
  ir::Node* node = dst.create_node(src.target(), std::move(args), std::move(specs), nullptr, src.name());
  node->mutable_metadata() = src.metadata();
  for (size_t i = 0; i < src.outputs().size(); ++i) {
    node->outputs()[i]->set_sym_value(src.outputs()[i]->sym_value());
    map[src.outputs()[i]] = node->outputs()[i];
  }
}

// Builds the graph of one PyTorch run and fills the step's inputs and outputs.
void build_torch_run(const ir::Graph& graph, const std::vector<const ir::Node*>& nodes, const ir::UseMap& uses,
                     ModuleStep& step) {
  auto g = std::make_shared<ir::Graph>();
  g->symbol_ranges() = graph.symbol_ranges();
  g->symbol_hints() = graph.symbol_hints();
  std::unordered_set<const ir::Node*> in_run(nodes.begin(), nodes.end());
  ValueMap map;
  for (const ir::Node* node : nodes) {
    for (ir::Value* v : node->inputs()) {
      if (map.count(v) != 0) continue;
      if (v->role() == ir::ValueRole::Constant) {
        map[v] = g->add_constant(v->name(), v->fqn(), v->constant_kind(), v->data(), v->meta());
        map[v]->set_meta(v->meta());
        continue;
      }
      ir::Value* input = g->add_input(v->name(), v->kind(), v->meta());
      input->set_sym_value(v->sym_value());
      map[v] = input;
      step.inputs.push_back(v);
    }
    copy_node(*g, *node, map);
  }
  std::vector<ir::Value*> outputs;
  for (const ir::Node* node : nodes) {
    for (const ir::Value* out : node->outputs()) {
      bool used_outside = graph.is_output(out);
      for (const ir::Node* user : uses.users(out)) used_outside = used_outside || in_run.count(user) == 0;
      if (!used_outside) continue;
      outputs.push_back(map.at(out));
      step.outputs.push_back(out);
    }
  }
  g->set_outputs(std::move(outputs));
  step.torch_graph = std::move(g);
  step.num_nodes = nodes.size();
}

}  // namespace

std::vector<ModuleStep> plan_module_steps(const ir::Graph& graph, const std::map<std::string, size_t>& engine_index) {
  ir::UseMap uses(graph);
  std::vector<ModuleStep> steps;
  std::vector<const ir::Node*> run;
  auto flush = [&]() {
    if (run.empty()) return;
    ModuleStep step;
    build_torch_run(graph, run, uses, step);
    steps.push_back(std::move(step));
    run.clear();
  };
  for (const ir::Node* node : graph.nodes()) {
    if (!ir::is_engine_segment(*node)) {
      KILN_CHECK(node->subgraph() == nullptr, Unsupported, "node '", node->name(), "' (",
                 node->target().to_string(), ") has a subgraph but is not an engine segment");
      run.push_back(node);
      continue;
    }
    flush();
    auto it = engine_index.find(node->name());
    KILN_CHECK(it != engine_index.end(), InvalidInput, "engine segment '", node->name(), "' has no built engine");
    KILN_CHECK(node->subgraph() != nullptr, InvalidInput, "engine segment '", node->name(), "' has no subgraph");
    ModuleStep step;
    step.segment = node;
    step.engine_index = it->second;
    const ir::Graph& sub = *node->subgraph();
    for (const ir::Value* v : ir::segment_inputs(*node)) step.inputs.push_back(v);
    KILN_CHECK(node->outputs().size() == sub.outputs().size(), InvalidInput, "engine segment '", node->name(),
               "' has ", node->outputs().size(), " outputs but its subgraph returns ", sub.outputs().size());
    for (const ir::Value* out : node->outputs()) step.outputs.push_back(out);
    step.num_nodes = sub.num_nodes();
    steps.push_back(std::move(step));
  }
  flush();

  // Last uses: walking backwards, a value read by a step and by no later step (nor a graph output) dies there.
  std::unordered_set<const ir::Value*> live(graph.outputs().begin(), graph.outputs().end());
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    std::set<const ir::Value*> seen;
    for (const ir::Value* v : it->inputs) {
      if (live.count(v) == 0 && seen.insert(v).second) it->last_uses.push_back(v);
    }
    for (const ir::Value* v : it->outputs) {
      if (live.count(v) == 0 && std::find(it->last_uses.begin(), it->last_uses.end(), v) == it->last_uses.end()) {
        it->last_uses.push_back(v);  // produced but read by nobody later
      }
    }
    for (const ir::Value* v : it->inputs) live.insert(v);
  }
  return steps;
}

std::string step_name(const ModuleStep& step, size_t index) {
  if (step.segment != nullptr) return step.segment->name();
  const std::vector<ir::Node*> nodes = step.torch_graph->nodes();
  std::string name = nodes.empty() ? "torch_run_" + std::to_string(index) : nodes.front()->name();
  if (nodes.size() > 1) name += ".." + nodes.back()->name();
  return name;
}

}  // namespace kiln::runtime
