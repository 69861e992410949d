// Copying values, nodes and subgraphs between graphs.

#include "kiln/ir/graph_extract.h"

#include <functional>
#include <string>
#include <unordered_set>

#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

// Adds an input named `name` to `dst` with `src`'s kind, meta and symbolic value.
Value* add_input_like(Graph& dst, const Value& src, const std::string& name) {
  Value* v = dst.add_input(name, src.kind(), src.meta());
  v->set_sym_value(src.sym_value());
  return v;
}

// Creates a copy of `src` at the end of `dst` named `name`, its arguments' values replaced by `map_value` and
// its outputs named by `output_name`; records its outputs in `map`. No metadata, no subgraph.
Node* copy_node_as(Graph& dst, const Node& src, ValueMap& map, const std::string& name,
                   const std::function<Value*(Value*)>& map_value,
                   const std::function<std::string(const Value&)>& output_name) {
  std::vector<NamedArgument> args = src.args();
  for (NamedArgument& a : args) {
    for (Value* v : a.value.values()) a.value.replace_value(v, map_value(v));
  }
  std::vector<OutputSpec> specs;
  for (const Value* out : src.outputs()) specs.push_back({output_name(*out), out->kind(), out->meta()});
  Node* node = dst.create_node(src.target(), std::move(args), std::move(specs), nullptr, name);
  for (size_t i = 0; i < src.outputs().size(); ++i) {
    node->outputs()[i]->set_sym_value(src.outputs()[i]->sym_value());
    map[src.outputs()[i]] = node->outputs()[i];
  }
  return node;
}

}  // namespace

Value* copy_as_input(Graph& dst, const Value& src) { return add_input_like(dst, src, src.name()); }

Value* copy_constant(Graph& dst, const Value& src) {
  Value* v = dst.add_constant(src.name(), src.fqn(), src.constant_kind(), src.data(), src.meta());
  v->set_meta(src.meta());
  return v;
}

Value* mapped(const ValueMap& map, const Value* value) {
  auto it = map.find(value);
  KILN_CHECK(it != map.end(), Internal, "graph copy: value '", value ? value->name() : std::string("<null>"),
             "' is read before it is defined in the graph being built");
  return it->second;
}

Node* copy_node(Graph& dst, const Node& src, ValueMap& map) {
  Node* node = copy_node_as(
      dst, src, map, src.name(), [&map](Value* v) { return mapped(map, v); },
      [](const Value& out) { return out.name(); });
  node->mutable_metadata() = src.metadata();
  node->set_subgraph(src.subgraph());
  return node;
}

Argument argument_for(Value* value) {
  switch (value->kind()) {
    case ValueKind::SymInt: return Argument::sym_int(SymIntArg{value, 0});
    case ValueKind::SymFloat: return Argument::sym_float(value);
    case ValueKind::SymBool: return Argument::sym_bool(value);
    default: return Argument::tensor(value);
  }
}

void copy_symbols(Graph& dst, const Graph& src) {
  dst.symbol_ranges() = src.symbol_ranges();
  dst.symbol_hints() = src.symbol_hints();
}

ValueMap copy_inputs_and_constants(Graph& dst, const Graph& src) {
  copy_symbols(dst, src);
  ValueMap map;
  for (const Value* in : src.inputs()) map[in] = copy_as_input(dst, *in);
  for (const Value* c : src.constants()) map[c] = copy_constant(dst, *c);
  return map;
}

void copy_outputs(Graph& dst, const Graph& src, const ValueMap& map) {
  std::vector<Value*> outputs;
  for (const Value* v : src.outputs()) outputs.push_back(mapped(map, v));
  dst.set_outputs(std::move(outputs));
}

ExtractedGraph extract_subgraph(const Graph& graph, const std::vector<const Node*>& nodes,
                                const UseMap& uses) {
  ExtractedGraph out;
  const std::unordered_set<const Node*> members(nodes.begin(), nodes.end());
  std::vector<const Value*> constants;
  std::unordered_set<const Value*> seen;
  for (const Node* n : nodes) {
    for (const Value* v : n->inputs()) {
      if (!seen.insert(v).second) continue;
      if (v->role() == ValueRole::Constant) {
        constants.push_back(v);
      } else if (v->producer() == nullptr || !members.count(v->producer())) {
        out.inputs.push_back(v);
      }
    }
  }
  for (const Node* n : nodes) {
    for (const Value* v : n->outputs()) {
      bool external = graph.is_output(v);
      for (const Node* u : uses.users(v)) external = external || !members.count(u);
      if (external) out.outputs.push_back(v);
    }
  }
  out.graph = std::make_shared<Graph>();
  copy_symbols(*out.graph, graph);
  ValueMap map;
  for (const Value* v : out.inputs) map[v] = copy_as_input(*out.graph, *v);
  for (const Value* c : constants) map[c] = copy_constant(*out.graph, *c);
  for (const Node* n : nodes) copy_node(*out.graph, *n, map);
  std::vector<Value*> outputs;
  for (const Value* v : out.outputs) outputs.push_back(mapped(map, v));
  out.graph->set_outputs(std::move(outputs));
  return out;
}

std::unique_ptr<Graph> canonical_copy(const Graph& graph) {
  auto out = std::make_unique<Graph>();
  ValueMap map;
  int next = 0;
  auto fresh = [&next](const Value&) { return "v" + std::to_string(next++); };
  for (const Value* in : graph.inputs()) map[in] = add_input_like(*out, *in, fresh(*in));
  for (const Value* c : graph.constants()) {
    map[c] = out->add_constant(fresh(*c), c->fqn().empty() ? c->name() : c->fqn(), c->constant_kind(),
                               HostTensor(), c->meta());
  }
  // A value no copy stands for stays as it is (a verified graph has none).
  auto map_value = [&map](Value* v) {
    auto it = map.find(v);
    return it == map.end() ? v : it->second;
  };
  int node_index = 0;
  for (const Node* n : graph.nodes()) {
    Node* copy = copy_node_as(*out, *n, map, "n" + std::to_string(node_index++), map_value, fresh);
    if (n->subgraph()) copy->set_subgraph(std::shared_ptr<Graph>(canonical_copy(*n->subgraph())));
  }
  std::vector<Value*> outputs;
  for (const Value* o : graph.outputs()) outputs.push_back(map.at(o));
  out->set_outputs(std::move(outputs));
  copy_symbols(*out, graph);
  return out;
}

}  // namespace kiln::ir
