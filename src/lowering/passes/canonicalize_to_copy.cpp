// Rewrites the dtype/device conversion forms of the training IR (to.dtype, to.dtype_layout, to.device,
// to.other, type_as) into aten._to_copy, or removes them when they change nothing.

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

bool run_canonicalize_to_copy(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    const bool is_to = node->target().ns == "aten" && node->target().name == "to";
    const bool is_type_as = detail::is_op(*node, "aten.type_as.default");
    if (!is_to && !is_type_as) continue;
    ir::Value* self = detail::tensor_arg(*node, "self");
    if (self == nullptr || node->outputs().size() != 1) continue;
    std::optional<DType> dtype;
    if (ir::Value* other = detail::tensor_arg(*node, "other")) {
      dtype = other->meta().dtype;
    } else if (!detail::arg_is_none(*node, "dtype")) {
      dtype = node->arg("dtype").as_scalar_type();
    }
    if (!dtype || *dtype == self->meta().dtype) {
      // Device moves are no-ops for the compiled graph: Kiln places tensors itself.
      detail::replace_node(graph, node, {self});
    } else {
      ir::Value* copy = detail::emit(graph, node, "aten._to_copy.default", detail::to_copy_args(self, dtype),
                                     detail::with_dtype(self->meta(), *dtype), "_to_copy");
      detail::replace_node(graph, node, {copy});
    }
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_canonicalize_to_copy_pass() {
  return std::make_shared<FunctionPass>(
      "canonicalize_to_copy", "Rewrites to.dtype/to.dtype_layout/to.device/to.other/type_as into _to_copy.",
      run_canonicalize_to_copy);
}

}  // namespace kiln::lowering
