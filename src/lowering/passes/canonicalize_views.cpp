// Rewrites every reshaping view form (view, _unsafe_view, view_copy, view_as, flatten, unflatten) into one:
// aten.reshape.default(self, shape) with static or SymInt sizes. A reshape of a reshape reads the first
// input directly.

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

// The shape argument that reshapes `self` to `sizes`: SymInts where needed, -1 for one inexpressible size.
std::optional<ir::Argument> shape_for(ir::Graph& graph, ir::Node* before, ir::Value* self,
                                      const std::vector<ir::SymExpr>& sizes) {
  if (auto args = detail::size_args(graph, before, self, sizes)) return detail::sym_ints_argument(*args);
  std::vector<ir::SymIntArg> args;
  bool used_infer = false;
  for (const ir::SymExpr& size : sizes) {
    auto one = detail::size_args(graph, before, self, {size});
    if (one) {
      args.push_back((*one)[0]);
    } else if (!used_infer) {
      args.push_back(ir::SymIntArg{nullptr, -1});
      used_infer = true;
    } else {
      return std::nullopt;
    }
  }
  return detail::sym_ints_argument(args);
}

ir::Value* emit_reshape(ir::Graph& graph, ir::Node* before, ir::Value* self, ir::Argument shape,
                        const ir::TensorMeta& meta) {
  return detail::emit(graph, before, "aten.reshape.default",
                      {detail::named("self", ir::Argument::tensor(self)), detail::named("shape", std::move(shape))},
                      meta, "reshape");
}

bool run_canonicalize_views(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (node->outputs().size() != 1) continue;
    ir::Value* self = detail::tensor_arg(*node, "self");
    if (self == nullptr) continue;
    const ir::TensorMeta& out_meta = node->output(0)->meta();
    std::optional<ir::Argument> shape;
    if (detail::is_op_any(*node, {"aten.view.default", "aten._unsafe_view.default", "aten.view_copy.default"})) {
      shape = node->arg("size");
    } else if (detail::is_op_any(*node, {"aten.flatten.using_ints", "aten.unflatten.int", "aten.view_as.default",
                                         "aten.reshape_as.default"})) {
      shape = shape_for(graph, node, self, out_meta.sizes);
      if (!shape) continue;
    } else if (detail::is_op(*node, "aten.reshape.default")) {
      // reshape(reshape(x)) == reshape(x): skip the inner one.
      ir::Node* inner = self->producer();
      if (inner == nullptr || !detail::is_op(*inner, "aten.reshape.default")) continue;
      ir::Value* source = detail::tensor_arg(*inner, "self");
      std::vector<ir::NamedArgument> args = node->args();
      for (auto& a : args) {
        if (a.name == "self") a.value = ir::Argument::tensor(source);
      }
      node->set_args(std::move(args));
      changed = true;
      continue;
    } else {
      continue;
    }
    // Reshaping a reshape: read the first input directly.
    if (ir::Node* inner = self->producer(); inner != nullptr && detail::is_op(*inner, "aten.reshape.default")) {
      self = detail::tensor_arg(*inner, "self");
    }
    ir::Value* reshape = emit_reshape(graph, node, self, *shape, out_meta);
    detail::replace_node(graph, node, {reshape});
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_canonicalize_views_pass() {
  return std::make_shared<FunctionPass>(
      "canonicalize_views", "Rewrites view/_unsafe_view/view_copy/view_as/flatten/unflatten into reshape and "
      "merges reshape chains.",
      run_canonicalize_views);
}

}  // namespace kiln::lowering
