#include "kiln/compiler/engine_hash.h"

#include <sstream>
#include <unordered_map>

#include "kiln/engine/plan.h"
#include "kiln/ir/text.h"
#include "kiln/settings/cache_key.h"
#include "kiln/support/hash.h"

namespace kiln::compiler {
namespace {

// A copy of `g` with values renamed v0, v1, ... in definition order, constants without data, nodes named n0, n1,
// ... and no metadata: what print_graph then writes depends on structure, dtypes and shapes only.
std::unique_ptr<ir::Graph> canonical_copy(const ir::Graph& g) {
  auto out = std::make_unique<ir::Graph>();
  std::unordered_map<const ir::Value*, ir::Value*> map;
  int next = 0;
  auto fresh = [&next] { return "v" + std::to_string(next++); };
  for (const ir::Value* in : g.inputs()) {
    ir::Value* v = out->add_input(fresh(), in->kind(), in->meta());
    v->set_sym_value(in->sym_value());
    map[in] = v;
  }
  for (const ir::Value* c : g.constants()) {
    map[c] = out->add_constant(fresh(), c->fqn().empty() ? c->name() : c->fqn(), c->constant_kind(), HostTensor(),
                               c->meta());
  }
  int node_index = 0;
  for (const ir::Node* n : g.nodes()) {
    std::vector<ir::NamedArgument> args = n->args();
    for (ir::NamedArgument& a : args) {
      for (ir::Value* v : a.value.values()) {
        auto it = map.find(v);
        if (it != map.end()) a.value.replace_value(v, it->second);
      }
    }
    std::vector<ir::OutputSpec> outputs;
    for (const ir::Value* o : n->outputs()) outputs.push_back({fresh(), o->kind(), o->meta()});
    ir::Node* copy = out->create_node(n->target(), std::move(args), std::move(outputs), nullptr,
                                      "n" + std::to_string(node_index++));
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      copy->outputs()[i]->set_sym_value(n->outputs()[i]->sym_value());
      map[n->outputs()[i]] = copy->outputs()[i];
    }
    if (n->subgraph()) copy->set_subgraph(std::shared_ptr<ir::Graph>(canonical_copy(*n->subgraph())));
  }
  std::vector<ir::Value*> outputs;
  for (const ir::Value* o : g.outputs()) outputs.push_back(map.at(o));
  out->set_outputs(std::move(outputs));
  out->symbol_ranges() = g.symbol_ranges();
  out->symbol_hints() = g.symbol_hints();
  return out;
}

}  // namespace

std::string canonical_segment_text(const ir::Graph& segment) {
  return ir::print_graph(*canonical_copy(segment));
}

std::string engine_segment_hash(const ir::Graph& segment, const ir::SymRanges& symbol_ranges,
                                const std::map<std::string, int64_t>& symbol_hints,
                                const CompilationSettings& settings, const std::string& device) {
  std::ostringstream key;
  // The first line names the key's format: bump it when what the key covers changes, so that entries made
  // under the old format are misses, never wrong hits. v2: the settings part comes from the settings table.
  key << "kiln engine cache key v2\nplan format " << engine::kPlanFormatVersion << "\n";
  key << "device " << device << "\n" << settings::engine_invariant_key(settings);
  for (const auto& [symbol, range] : symbol_ranges) key << "range " << symbol << " " << range.min << " " << range.max << "\n";
  for (const auto& [symbol, hint] : symbol_hints) key << "hint " << symbol << " " << hint << "\n";
  key << canonical_segment_text(segment);
  Sha256 sha;
  sha.update(key.str());
  return sha.hex_digest();
}

}  // namespace kiln::compiler
