// Rewrites in-place ops into their functional forms. In the training IR an in-place op mutates `self`, and
// later readers of `self` see the new data; the functional node's output takes the place of `self` for every
// node after it. When `self` is a view (slices, selects) of a tensor read later — `mask[:, a:b] = 1` — the new
// data is written back into that tensor with slice_scatter/select_scatter, whose result takes its place.
// Mutating a graph input or a constant (a buffer) cannot be expressed in a functional graph and fails with a
// clear error; so does mutating through views that cannot be written back, or while another view of the same
// data is read later.

#include <set>

#include "../rewrite.h"
#include "kiln/frontend/op_schema.h"
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

// One step of the view chain from the mutated value up to the tensor it views: `view` made `value` from `base`.
struct ViewLink {
  ir::Node* view;
  ir::Value* base;
};

// Views through which a mutation can be written back into the base: slices, selects and plain aliases.
bool is_writable_view(const ir::Node& view) {
  return detail::is_op_any(view, {"aten.slice.Tensor", "aten.select.int", "aten.alias.default",
                                  "aten.detach.default"});
}

bool read_after(ir::Graph& graph, ir::Value* value, size_t at) {
  if (graph.is_output(value)) return true;
  for (ir::Node* user : graph.users(value)) {
    if (graph.index_of(user) > at) return true;
  }
  return false;
}

// The chain of views from `self` up to its root (innermost first). Throws when the mutated value is (a view of) a
// graph input or a constant, or when the mutation cannot be expressed functionally: an intermediate view read
// afterwards, a root read afterwards through views that cannot be written back, or another view of the chain
// made earlier and read afterwards (it would have to see the new data).
std::vector<ViewLink> view_chain(ir::Graph& graph, ir::Node* node, ir::Value* self) {
  const std::string op = node->target().to_string();
  std::vector<ViewLink> chain;
  ir::Value* value = self;
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
    chain.push_back({producer, base});
    value = base;
  }
  const size_t at = graph.index_of(node);
  bool writable = true;
  for (const ViewLink& link : chain) writable &= is_writable_view(*link.view);
  for (size_t i = 0; i < chain.size(); ++i) {
    ir::Value* base = chain[i].base;
    const bool root = i + 1 == chain.size();
    KILN_CHECK(!read_after(graph, base, at) || (root && writable), Unsupported, "in-place op ", op, " at node '",
               node->name(), "' mutates a view of '", base->name(),
               "', which is read afterwards; Kiln cannot functionalize this aliasing");
    for (ir::Node* user : graph.users(base)) {
      if (graph.index_of(user) >= at || !is_view_op(*user) || user == chain[i].view) continue;
      for (ir::Value* aliased : user->outputs()) {
        KILN_CHECK(!read_after(graph, aliased, at), Unsupported, "in-place op ", op, " at node '", node->name(),
                   "' mutates '", base->name(), "', of which '", aliased->name(),
                   "' is a view read afterwards; Kiln cannot functionalize this aliasing");
      }
    }
  }
  return chain;
}

// Writes `updated` (the new value of the chain's innermost view) back through the chain: each slice becomes a
// slice_scatter and each select a select_scatter into the view's base. Returns the root's new value.
ir::Value* write_back(ir::Graph& graph, ir::Node* node, const std::vector<ViewLink>& chain, ir::Value* updated) {
  for (const ViewLink& link : chain) {
    const ir::Node& view = *link.view;
    if (detail::is_op(view, "aten.slice.Tensor")) {
      updated = detail::emit(graph, node, "aten.slice_scatter.default",
                             {detail::named("self", ir::Argument::tensor(link.base)),
                              detail::named("src", ir::Argument::tensor(updated)), detail::named("dim", view.arg("dim")),
                              detail::named("start", view.arg("start")), detail::named("end", view.arg("end")),
                              detail::named("step", view.arg("step"))},
                             link.base->meta(), "slice_scatter");
    } else if (detail::is_op(view, "aten.select.int")) {
      updated = detail::emit(graph, node, "aten.select_scatter.default",
                             {detail::named("self", ir::Argument::tensor(link.base)),
                              detail::named("src", ir::Argument::tensor(updated)), detail::named("dim", view.arg("dim")),
                              detail::named("index", view.arg("index"))},
                             link.base->meta(), "select_scatter");
    }  // alias/detach: the base takes the new value as it is
  }
  return updated;
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
    const std::vector<ViewLink> chain = view_chain(graph, node, self);
    ir::Value* result = nullptr;
    if (node->target().name == "copy_") {
      result = functional_copy(graph, node, self);
    } else {
      ir::OpName functional = node->target();
      functional.name.pop_back();
      ir::TensorMeta meta = node->outputs().empty() ? self->meta() : node->output(0)->meta();
      result = detail::emit(graph, node, functional.to_string(), node->args(), meta, functional.name);
      // The in-place overload's `self` may be called otherwise in the functional schema (dropout_ -> input).
      frontend::fill_default_arguments(*result->producer());
    }
    if (!chain.empty() && read_after(graph, chain.back().base, graph.index_of(node))) {
      ir::Value* root = chain.back().base;
      detail::replace_uses_after(graph, node, root, write_back(graph, node, chain, result));
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
