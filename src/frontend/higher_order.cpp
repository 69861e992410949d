#include "frontend/higher_order.h"

#include <unordered_map>

#include "kiln/ir/higher_order.h"
#include "kiln/support/error.h"

namespace kiln::frontend {
namespace {

bool is_wrapper(const ir::Node& node) {
  return ir::is_higher_order(node.target()) &&
         (node.target().name == "wrap_with_set_grad_enabled" || node.target().name == "wrap_with_autocast");
}

// The autocast region's description for ir::kAutocastKey: wrap_with_autocast(device_type, dtype, enabled,
// cache_enabled, graph, *operands).
std::string autocast_label(const ir::Node& node) {
  const auto& args = node.args();
  std::string device = args.size() > 0 && args[0].value.kind() == ir::Argument::Kind::String
                           ? args[0].value.as_string()
                           : "cuda";
  bool enabled =
      args.size() > 2 && args[2].value.kind() == ir::Argument::Kind::Bool ? args[2].value.as_bool() : true;
  if (!enabled) return device + ":disabled";
  std::string dtype = args.size() > 1 && args[1].value.kind() == ir::Argument::Kind::ScalarType
                          ? dtype_name(args[1].value.as_scalar_type())
                          : "default";
  return device + ":" + dtype;
}

// The values the wrapper passes to its subgraph's inputs (every argument after the graph, lists flattened),
// or false when one of them is not a value (a constant operand).
bool operand_values(const ir::Node& node, std::vector<ir::Value*>& out) {
  bool after_graph = false;
  for (const ir::NamedArgument& a : node.args()) {
    if (a.value.kind() == ir::Argument::Kind::Graph) {
      if (after_graph) return false;  // two subgraphs: not a plain wrapper
      after_graph = true;
      continue;
    }
    if (!after_graph) continue;
    using K = ir::Argument::Kind;
    switch (a.value.kind()) {
      case K::Tensor:
      case K::Tensors:
      case K::SymFloat:
      case K::SymBool:
        for (ir::Value* v : a.value.values()) out.push_back(v);
        if (a.value.kind() == K::Tensors && a.value.values().size() != a.value.as_tensors().size())
          return false;
        break;
      case K::SymInt:
        if (!a.value.as_sym_int().is_value()) return false;
        out.push_back(a.value.as_sym_int().value);
        break;
      default: return false;
    }
  }
  return after_graph;
}

bool inline_wrapper(ir::Graph& graph, ir::Node* node) {
  const ir::Graph* body = ir::nested_graphs(*node).front();
  std::vector<ir::Value*> operands;
  if (!operand_values(*node, operands) || operands.size() != body->inputs().size()) return false;
  // Outputs: the wrapper's i-th output is its subgraph's i-th output (Opaque slots of None outputs aside).
  std::vector<ir::Value*> node_outputs;
  for (ir::Value* v : node->outputs()) {
    if (v->kind() != ir::ValueKind::Opaque) node_outputs.push_back(v);
  }
  if (node_outputs.size() != body->outputs().size()) return false;
  for (const ir::Value* v : body->outputs()) {
    if (v == nullptr) return false;
  }

  std::unordered_map<const ir::Value*, ir::Value*> mapped;
  for (size_t i = 0; i < operands.size(); ++i) mapped[body->inputs()[i]] = operands[i];
  for (const ir::Value* c : body->constants()) {
    mapped[c] =
        graph.add_constant(graph.unique_name(c->name()), c->fqn(), c->constant_kind(), c->data(), c->meta());
  }
  const std::string autocast = node->target().name == "wrap_with_autocast" ? autocast_label(*node) : "";
  for (const ir::Node* inner : body->nodes()) {
    std::vector<ir::NamedArgument> args = inner->args();
    for (ir::NamedArgument& a : args) {
      for (ir::Value* v : a.value.values()) {
        auto it = mapped.find(v);
        KILN_CHECK(it != mapped.end(), InvalidInput, "node '", inner->name(), "' of the subgraph of '",
                   node->name(), "' reads value '", v->name(), "', which the subgraph does not define");
        a.value.replace_value(v, it->second);
      }
    }
    std::vector<ir::OutputSpec> specs;
    for (const ir::Value* out : inner->outputs()) {
      specs.push_back(ir::OutputSpec{graph.unique_name(out->name()), out->kind(), out->meta()});
    }
    // unique_name only knows names already in the graph: give each spec its own base so two outputs of one
    // node cannot receive the same fresh name.
    for (size_t i = 1; i < specs.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (specs[j].name == specs[i].name)
          specs[i].name = graph.unique_name(specs[i].name + "_" + std::to_string(i));
      }
    }
    ir::Node* copy = graph.create_node(inner->target(), std::move(args), std::move(specs), node,
                                       graph.unique_name(inner->name()));
    copy->mutable_metadata() = inner->metadata();
    if (!autocast.empty() && copy->metadata().count(ir::kAutocastKey) == 0) {
      copy->mutable_metadata()[ir::kAutocastKey] = autocast;
    }
    if (inner->subgraph()) copy->set_subgraph(inner->subgraph());
    for (size_t i = 0; i < inner->outputs().size(); ++i) {
      copy->output(i)->set_sym_value(inner->output(i)->sym_value());
      mapped[inner->output(i)] = copy->output(i);
    }
  }
  for (size_t i = 0; i < node_outputs.size(); ++i)
    graph.replace_all_uses(node_outputs[i], mapped.at(body->outputs()[i]));
  graph.erase_node(node);
  return true;
}

}  // namespace

size_t inline_higher_order_wrappers(ir::Graph& graph) {
  size_t count = 0;
  for (ir::Node* node : graph.nodes()) {
    if (is_wrapper(*node) && ir::nested_graphs(*node).size() == 1 && inline_wrapper(graph, node)) ++count;
  }
  return count;
}

}  // namespace kiln::frontend
