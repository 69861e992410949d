// A module's layout: steps, engine bindings and environment slots, checked against its engines.

#include "runtime_core/module_layout.h"

#include <map>

#include "kiln/support/error.h"

namespace kiln::runtime {

size_t ModuleLayout::slot(const ir::Value* v) const {
  auto it = slots.find(v);
  KILN_CHECK(it != slots.end(), Internal, "value '", v->name(), "' has no slot in the compiled module");
  return it->second;
}

ModuleLayout layout_module(const ir::Graph& graph, const std::vector<EngineSegment>& engines) {
  ModuleLayout m;
  std::map<std::string, size_t> engine_index;
  for (size_t i = 0; i < engines.size(); ++i) {
    const EngineSegment& e = engines[i];
    KILN_CHECK(e.plan != nullptr, InvalidInput, "engine segment '", e.node, "' has no plan");
    KILN_CHECK(engine_index.emplace(e.node, i).second, InvalidInput, "engine segment '", e.node, "' given twice");
  }
  m.steps = plan_module_steps(graph, engine_index);
  std::vector<bool> engine_used(engines.size(), false);

  for (const ir::Value* v : graph.inputs()) m.slots.emplace(v, m.slots.size());
  m.input_bindings.resize(engines.size());
  m.output_bindings.resize(engines.size());
  for (const ModuleStep& step : m.steps) {
    for (const ir::Value* v : step.outputs) m.slots.emplace(v, m.slots.size());
    if (step.segment == nullptr) continue;
    const size_t k = step.engine_index;
    engine_used[k] = true;
    const EngineSegment& e = engines[k];
    const ir::Graph& sub = *step.segment->subgraph();
    KILN_CHECK(e.input_bindings.size() == sub.inputs().size(), InvalidInput, "engine segment '", e.node, "' has ",
               sub.inputs().size(), " inputs but ", e.input_bindings.size(), " input bindings");
    KILN_CHECK(e.output_bindings.size() == sub.outputs().size(), InvalidInput, "engine segment '", e.node, "' has ",
               sub.outputs().size(), " outputs but ", e.output_bindings.size(), " output bindings");
    for (size_t i = 0; i < e.input_bindings.size(); ++i) {
      const engine::Binding* b = nullptr;
      if (!e.input_bindings[i].empty()) {
        b = &e.plan->binding(e.input_bindings[i]);
        KILN_CHECK(b->is_input, InvalidInput, "engine segment '", e.node, "': binding '", b->name,
                   "' is not an input of its plan");
      } else {
        KILN_CHECK(!sub.inputs()[i]->is_tensor(), InvalidInput, "engine segment '", e.node, "': tensor input '",
                   sub.inputs()[i]->name(), "' has no binding");
      }
      m.input_bindings[k].push_back(b);
    }
    for (size_t i = 0; i < e.output_bindings.size(); ++i) {
      const engine::Binding* b = &e.plan->binding(e.output_bindings[i]);
      KILN_CHECK(!b->is_input, InvalidInput, "engine segment '", e.node, "': binding '", b->name,
                 "' is not an output of its plan");
      m.output_bindings[k].push_back(b);
    }
  }
  for (size_t i = 0; i < engines.size(); ++i) {
    KILN_CHECK(engine_used[i], InvalidInput, "engine '", engines[i].node,
               "' matches no engine segment node of the graph");
  }
  // Top-level constants read by engine segments or returned directly live in the environment.
  std::vector<const ir::Value*> needed(graph.outputs().begin(), graph.outputs().end());
  for (const ModuleStep& step : m.steps) {
    if (step.segment != nullptr) needed.insert(needed.end(), step.inputs.begin(), step.inputs.end());
  }
  for (const ir::Value* v : needed) {
    if (v->role() != ir::ValueRole::Constant || m.slots.count(v) != 0) continue;
    KILN_CHECK(v->data().defined(), InvalidInput, "constant '", v->name(), "' has no data");
    const size_t s = m.slots.size();
    m.slots.emplace(v, s);
    m.constants.emplace_back(s, v);
  }
  for (const ir::Value* v : graph.outputs()) m.slot(v);  // every output is produced somewhere
  return m;
}

ModuleSummary summarize_steps(const std::vector<ModuleStep>& steps) {
  ModuleSummary s;
  for (const ModuleStep& step : steps) {
    if (step.segment != nullptr) {
      ++s.engine_segments;
      s.engine_nodes += step.num_nodes;
    } else {
      ++s.torch_runs;
      s.torch_nodes += step.num_nodes;
    }
  }
  return s;
}

std::vector<SegmentInfo> describe_steps(const std::vector<ModuleStep>& steps) {
  std::vector<SegmentInfo> out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const ModuleStep& step = steps[i];
    SegmentInfo info{step.segment != nullptr, step_name(step, i), step.num_nodes, {}};
    const ir::Graph& nodes = step.segment != nullptr ? *step.segment->subgraph() : *step.torch_graph;
    for (const ir::Node* n : nodes.nodes()) ++info.ops[n->target().to_string()];
    out.push_back(std::move(info));
  }
  return out;
}

void check_output_kinds(const ir::Graph& graph, const std::vector<std::string>& kinds) {
  KILN_CHECK(kinds.empty() || kinds.size() == graph.outputs().size(), InvalidInput, "CompiledModule: ",
             kinds.size(), " output kinds for ", graph.outputs().size(), " outputs");
  for (size_t i = 0; i < kinds.size(); ++i) {
    KILN_CHECK(kinds[i] == "user_output" || kinds[i] == "other", InvalidInput, "CompiledModule: output ", i, " ('",
               graph.outputs()[i]->name(), "') has the unknown output kind '", kinds[i],
               "' (expected 'user_output' or 'other')");
  }
}

std::vector<size_t> user_outputs(const ir::Graph& graph, const std::vector<std::string>& kinds) {
  std::vector<size_t> indices;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    if (kinds.empty() || kinds[i] == "user_output") indices.push_back(i);
  }
  return indices;
}

}  // namespace kiln::runtime
