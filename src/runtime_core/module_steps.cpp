// Splitting a partitioned graph into engine steps and PyTorch runs.

#include "runtime_core/module_steps.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "kiln/ir/graph_extract.h"
#include "kiln/ir/segment.h"
#include "kiln/support/error.h"

namespace kiln::runtime {
namespace {

// Builds the graph of one PyTorch run and fills the step's inputs and outputs.
void build_torch_run(const ir::Graph& graph, const std::vector<const ir::Node*>& nodes, const ir::UseMap& uses,
                     ModuleStep& step) {
  ir::ExtractedGraph run = ir::extract_subgraph(graph, nodes, uses);
  step.torch_graph = std::move(run.graph);
  step.inputs = std::move(run.inputs);
  step.outputs = std::move(run.outputs);
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
