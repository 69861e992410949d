// The IR verifier.

#include "kiln/ir/verifier.h"

#include <unordered_set>

#include "kiln/support/error.h"

namespace kiln::ir {

namespace {

[[noreturn]] void fail(const std::string& where, const Node* node, const std::string& message) {
  throw Error(ErrorKind::Internal, "IR verifier" + where + ": " + message,
              ErrorContext{"", node ? node->name() : "", node ? node->target().to_string() : "", ""});
}

bool value_kind_ok(Argument::Kind arg, ValueKind value) {
  switch (arg) {
    case Argument::Kind::Tensor:
    case Argument::Kind::Tensors:
    case Argument::Kind::OptionalTensors:
      // Opaque values (script objects) travel in tensor slots, as torch.export passes them.
      return value == ValueKind::Tensor || value == ValueKind::Opaque;
    case Argument::Kind::SymInt:
    case Argument::Kind::SymInts: return value == ValueKind::SymInt;
    case Argument::Kind::SymFloat: return value == ValueKind::SymFloat;
    case Argument::Kind::SymBool: return value == ValueKind::SymBool;
    default: return false;
  }
}

void verify_graph(const Graph& g, const std::string& where) {
  std::unordered_set<const Value*> defined;
  std::unordered_set<std::string> value_names;
  auto define = [&](const Value* v, const Node* node) {
    if (v == nullptr) fail(where, node, "null value");
    if (!value_names.insert(v->name()).second) fail(where, node, "duplicate value name '" + v->name() + "'");
    if (g.find_value(v->name()) != v)
      fail(where, node, "value '" + v->name() + "' is not owned by the graph");
    defined.insert(v);
  };
  for (const Value* v : g.inputs()) {
    define(v, nullptr);
    if (v->role() != ValueRole::Input)
      fail(where, nullptr, "graph input '" + v->name() + "' does not have the Input role");
  }
  for (const Value* v : g.constants()) {
    define(v, nullptr);
    if (v->role() != ValueRole::Constant || !v->is_tensor()) {
      fail(where, nullptr, "constant '" + v->name() + "' is not a tensor value with the Constant role");
    }
  }
  std::unordered_set<std::string> node_names;
  for (const Node* node : g.nodes()) {
    if (node->owner() != &g) fail(where, node, "node is not owned by the graph");
    if (!node_names.insert(node->name()).second)
      fail(where, node, "duplicate node name '" + node->name() + "'");
    for (const auto& a : node->args()) {
      for (const Value* v : a.value.values()) {
        if (!defined.count(v)) {
          bool in_graph = g.find_value(v->name()) == v;
          fail(where, node,
               "argument '" + a.name + "' uses value '" + v->name() + "' " +
                   (in_graph ? "before its definition" : "that is not defined in the graph"));
        }
        if (!value_kind_ok(a.value.kind(), v->kind())) {
          fail(where, node,
               "argument '" + a.name + "' of kind " + to_string(a.value.kind()) + " refers to value '" +
                   v->name() + "' of kind " + to_string(v->kind()));
        }
      }
    }
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      const Value* v = node->outputs()[i];
      define(v, node);
      if (v->producer() != node || v->output_index() != i || v->role() != ValueRole::NodeOutput) {
        fail(where, node,
             "output '" + v->name() + "' does not point back at its node as output " + std::to_string(i));
      }
    }
    if (node->subgraph())
      verify_graph(*node->subgraph(), where + " (subgraph of node '" + node->name() + "')");
    for (const auto& a : node->args()) {
      if (a.value.kind() == Argument::Kind::Graph) {
        verify_graph(*a.value.as_graph(), where + " (graph argument '" + a.name + "' of node '" + node->name() + "')");
      }
    }
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value* v = g.outputs()[i];
    if (v == nullptr) fail(where, nullptr, "graph output " + std::to_string(i) + " is null");
    if (!defined.count(v)) {
      fail(where, nullptr,
           "graph output " + std::to_string(i) + " '" + v->name() + "' is not defined in the graph");
    }
  }
}

}  // namespace

void verify(const Graph& graph) { verify_graph(graph, ""); }

}  // namespace kiln::ir
