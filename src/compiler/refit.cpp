#include "kiln/compiler/refit.h"

#include <map>
#include <sstream>

#include "compiler/plan_refit.h"
#include "kiln/compiler/compile.h"
#include "kiln/compiler/engine_hash.h"
#include "kiln/ir/segment.h"
#include "kiln/ir/text.h"
#include "kiln/partitioning/segments.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::compiler {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// Where the canonical texts (engine_hash.h) of `module` and `fresh` first differ: that line of each graph's
/// printed text, which carries the real value names (both print one line per input, constant and node, so the
/// line numbers agree up to the first difference); "" when the canonical texts are equal.
std::string first_difference(const ir::Graph& module, const ir::Graph& fresh) {
  const std::vector<std::string> a = lines(canonical_segment_text(module)), b = lines(canonical_segment_text(fresh));
  if (a == b) return "";
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::vector<std::string> ra = lines(ir::print_graph(module)), rb = lines(ir::print_graph(fresh));
  auto line = [i](const std::vector<std::string>& text) {
    if (i >= text.size()) return std::string("(nothing)");
    std::string l = text[i];
    l.erase(0, l.find_first_not_of(' '));
    return "'" + l + "'";
  };
  return "the new program has " + line(rb) + " where the compiled module has " + line(ra);
}

// The new program, lowered and partitioned as the module is, must equal the module's graph in everything the
// engine cache hashes (engine_hash.h: targets, arguments, structure, dtypes, shapes, constants' refit names),
// engine segment by engine segment, and in its PyTorch-run nodes: an operator histogram let a changed dim, eps,
// dropped bias or swapped weight through, refitting an engine that then computed the old program's function.
void check_same_graph(const ir::Graph& module_graph, const ir::Graph& lowered) {
  std::unique_ptr<ir::Graph> fresh;
  try {
    fresh = partitioning::partition_like(lowered, module_graph);
  } catch (const Error& e) {
    throw Error(ErrorKind::InvalidInput, "refit: the new program's structure differs: " + e.message());
  }
  std::vector<const ir::Node*> engines;
  for (const ir::Node* n : fresh->nodes()) {
    if (ir::is_engine_segment(*n)) engines.push_back(n);
  }
  size_t k = 0;
  for (const ir::Node* n : module_graph.nodes()) {
    if (!ir::is_engine_segment(*n)) continue;
    const std::string diff = first_difference(*n->subgraph(), *engines.at(k++)->subgraph());
    KILN_CHECK(diff.empty(), InvalidInput, "refit: the new program's structure differs in engine segment '",
               n->name(), "': ", diff);
  }
  const std::string diff = first_difference(module_graph, *fresh);
  KILN_CHECK(diff.empty(), InvalidInput, "refit: the new program's structure differs: ", diff);
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
  check_same_graph(module.graph(), *lowered);
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
  refitted->set_static_shape_cuda_graphs(module.static_shape_cuda_graphs());
  refitted->set_compile_settings(module.compile_settings());
  KILN_INFO("refit: ", module.engines().size(), " engines and ", module.graph().constants().size(),
            " PyTorch-side constants from the new program");
  return refitted;
}

}  // namespace kiln::compiler
