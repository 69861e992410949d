#include "kiln/compiler/refit.h"

#include <map>

#include "compiler/plan_refit.h"
#include "kiln/compiler/compile.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::compiler {
namespace {

bool is_segment(const ir::Node& node) {
  return node.target().ns == "kiln" && node.target().name == "engine_segment" && node.subgraph() != nullptr;
}

// Operator counts of a graph with engine segments flattened (what lowering produced, however partitioned).
void count_ops(const ir::Graph& graph, std::map<std::string, int64_t>& counts) {
  for (const ir::Node* node : graph.nodes()) {
    if (is_segment(*node)) {
      count_ops(*node->subgraph(), counts);
    } else {
      ++counts[node->target().to_string()];
    }
  }
}

void check_same_structure(const ir::Graph& module_graph, const ir::Graph& lowered) {
  std::map<std::string, int64_t> before, after;
  count_ops(module_graph, before);
  count_ops(lowered, after);
  for (auto& [op, n] : after) before.try_emplace(op, 0);
  for (const auto& [op, n] : before) {
    const int64_t m = after.count(op) ? after.at(op) : 0;
    KILN_CHECK(n == m, InvalidInput, "refit: the new program's structure differs: ", op, " appears ", m,
               " times in it after lowering, ", n, " times in the compiled module");
  }
  KILN_CHECK(module_graph.inputs().size() == lowered.inputs().size(), InvalidInput, "refit: the new program has ",
             lowered.inputs().size(), " inputs, the compiled module ", module_graph.inputs().size());
  for (size_t i = 0; i < lowered.inputs().size(); ++i) {
    const ir::Value* a = module_graph.inputs()[i];
    const ir::Value* b = lowered.inputs()[i];
    KILN_CHECK(a->kind() != ir::ValueKind::Tensor || a->meta().to_string() == b->meta().to_string(), InvalidInput,
               "refit: input ", i, " is ", b->meta().to_string(), " in the new program, ", a->meta().to_string(),
               " in the compiled module");
  }
}

// Gives every constant of `graph` (and of its segments) the data of the constant of the same refit name in `source`.
void take_constants(ir::Graph& graph, const std::map<std::string, const ir::Value*>& source) {
  for (ir::Value* c : graph.constants()) {
    const std::string name = c->fqn().empty() ? c->name() : c->fqn();
    auto it = source.find(name);
    KILN_CHECK(it != source.end(), InvalidInput, "refit: constant '", name,
               "' of the compiled module is not in the new program (after lowering)");
    const HostTensor& value = it->second->data();
    KILN_CHECK(value.defined() && value.dtype() == c->meta().dtype && value.describe() == c->data().describe(),
               InvalidInput, "refit: constant '", name, "' is ", value.describe(), " in the new program, ",
               c->data().describe(), " in the compiled module");
    c->set_data(value);
  }
}

}  // namespace

std::shared_ptr<runtime::CompiledModule> refit_module_weights(const runtime::CompiledModule& module,
                                                              const frontend::Program& new_program,
                                                              const CompilationSettings& settings) {
  KILN_CHECK(new_program.graph != nullptr, InvalidInput, "refit: the new program has no graph");
  PhaseTimer timer("refit");
  CompilationSettings s = settings;
  s.backend = module.backend();
  std::unique_ptr<ir::Graph> lowered = new_program.graph->clone();
  lower(*lowered, s);
  check_same_structure(module.graph(), *lowered);
  const auto source = detail::constants_by_refit_name(*lowered);

  std::unique_ptr<ir::Graph> graph = module.graph().clone();
  take_constants(*graph, source);
  std::vector<runtime::EngineSegment> engines;
  for (const runtime::EngineSegment& old : module.engines()) {
    ir::Node* node = graph->find_node(old.node);
    const ir::Node* old_node = module.graph().find_node(old.node);
    KILN_CHECK(node != nullptr && old_node != nullptr && node->subgraph() != nullptr, Internal, "refit: segment '",
               old.node, "' not in the module graph");
    take_constants(*node->subgraph(), source);
    // Constants an engine holds compiled in must not have changed.
    const auto old_baked = detail::baked_constant_digests(*old.plan, *old_node->subgraph());
    const auto new_baked = detail::baked_constant_digests(*old.plan, *node->subgraph());
    for (const auto& [name, digest] : old_baked) {
      KILN_CHECK(new_baked.at(name) == digest, InvalidInput, "refit: constant '", name, "' is compiled into engine '",
                 old.node, "' (not a refittable weight) and differs in the new program; compile it instead");
    }
    runtime::EngineSegment segment = old;
    try {
      segment.plan = detail::refitted_copy(*old.plan, *node->subgraph());
    } catch (const Error& e) {
      throw Error(e.kind(), "refit: engine '" + old.node + "': " + e.message(), e.context());
    }
    engines.push_back(std::move(segment));
  }
  std::shared_ptr<const ir::Graph> shared(std::move(graph));
  auto refitted = std::make_shared<runtime::CompiledModule>(shared, std::move(engines), module.backend());
  refitted->set_output_kinds(module.output_kinds());
  refitted->set_use_cuda_graphs(module.use_cuda_graphs());
  KILN_INFO("refit: ", module.engines().size(), " engines and ", module.graph().constants().size(),
            " PyTorch-side constants from the new program");
  return refitted;
}

}  // namespace kiln::compiler
