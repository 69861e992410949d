// Rewrites in-place ops into their functional forms. In the training IR an in-place op mutates `self`, and
// later readers of `self` see the new data; the functional node's output takes the place of `self` for every
// node after it. Mutating a graph input or a constant (a buffer) cannot be expressed in a functional graph
// and fails with a clear error; so does mutating a view whose base is read later.

#include <set>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"
#include "kiln/support/error.h"

namespace kiln::lowering {
namespace {

bool is_inplace(const ir::Node& node) {
  const std::string& name = node.target().name;
  return node.target().ns == "aten" && name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_';
}

bool is_view_op(const ir::Node& node) {
  static const std::set<std::string> kViews = {
      "view", "_unsafe_view", "reshape", "transpose", "permute", "select", "slice", "expand", "unsqueeze",
      "squeeze", "t", "as_strided", "alias", "detach", "unflatten", "flatten", "split", "split_with_sizes",
      "chunk", "unbind", "diagonal", "narrow", "view_as", "expand_as", "numpy_T", "unfold"};
  return node.target().ns == "aten" && kViews.count(node.target().name) > 0;
}

// Throws when the mutated value is (a view of) something the functional rewrite cannot update.
void check_mutable(ir::Graph& graph, ir::Node* node, ir::Value* self) {
  const std::string op = node->target().to_string();
  ir::Value* value = self;
  std::vector<ir::Value*> chain;
  while (true) {
    KILN_CHECK(value->role() != ir::ValueRole::Input, Unsupported, "in-place op ", op, " at node '", node->name(),
               "' mutates graph input '", value->name(), "'; Kiln compiles functional graphs only");
    KILN_CHECK(value->role() != ir::ValueRole::Constant, Unsupported, "in-place op ", op, " at node '",
               node->name(), "' mutates constant '", value->name(), "' (", value->fqn(),
               "); Kiln compiles functional graphs only");
    ir::Node* producer = value->producer();
    if (producer == nullptr || !is_view_op(*producer)) break;
    ir::Value* base = producer->inputs().empty() ? nullptr : producer->inputs().front();
    if (base == nullptr) break;
    chain.push_back(base);
    value = base;
  }
  const size_t at = graph.index_of(node);
  for (ir::Value* base : chain) {
    bool read_later = graph.is_output(base);
    for (ir::Node* user : graph.users(base)) read_later |= graph.index_of(user) > at;
    KILN_CHECK(!read_later, Unsupported, "in-place op ", op, " at node '", node->name(), "' mutates a view of '",
               base->name(), "', which is read afterwards; Kiln cannot functionalize this aliasing");
  }
}

// The functional replacement of copy_(self, src): src cast to self's dtype and broadcast to self's shape.
ir::Value* functional_copy(ir::Graph& graph, ir::Node* node, ir::Value* self) {
  ir::Value* src = detail::tensor_arg(*node, "src");
  KILN_CHECK(src != nullptr, InvalidInput, "copy_ at node '", node->name(), "' has no src");
  ir::Value* value = src;
  if (src->meta().dtype != self->meta().dtype) {
    value = detail::emit(graph, node, "aten._to_copy.default", detail::to_copy_args(value, self->meta().dtype),
                         detail::with_dtype(src->meta(), self->meta().dtype), "_to_copy");
  }
  if (value->meta().sizes != self->meta().sizes) {
    auto sizes = detail::size_args(graph, node, self, self->meta().sizes);
    KILN_CHECK(sizes.has_value(), Unsupported, "copy_ at node '", node->name(), "': cannot express the shape ",
               self->meta().to_string(), " of '", self->name(), "'");
    value = detail::emit(graph, node, "aten.expand.default",
                         {detail::named("self", ir::Argument::tensor(value)),
                          detail::named("size", detail::sym_ints_argument(*sizes)),
                          detail::named("implicit", ir::Argument::bool_(false), true)},
                         detail::with_sizes(value->meta(), self->meta().sizes), "expand");
  }
  return value;
}

bool run_functionalize(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (!is_inplace(*node)) continue;
    ir::Value* self = detail::tensor_arg(*node, "self");
    KILN_CHECK(self != nullptr, InvalidInput, "in-place op ", node->target().to_string(), " at node '",
               node->name(), "' has no tensor 'self' argument");
    check_mutable(graph, node, self);
    ir::Value* result = nullptr;
    if (node->target().name == "copy_") {
      result = functional_copy(graph, node, self);
    } else {
      ir::OpName functional = node->target();
      functional.name.pop_back();
      ir::TensorMeta meta = node->outputs().empty() ? self->meta() : node->output(0)->meta();
      result = detail::emit(graph, node, functional.to_string(), node->args(), meta, functional.name);
    }
    detail::replace_uses_after(graph, node, self, result);
    for (ir::Value* out : node->outputs()) graph.replace_all_uses(out, result);
    graph.erase_node(node);
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_functionalize_inplace_pass() {
  return std::make_shared<FunctionPass>(
      "functionalize_inplace", "Rewrites in-place ops (add_, relu_, copy_, ...) into functional ops.",
      run_functionalize);
}

}  // namespace kiln::lowering
