// Removes ops that produce their input unchanged in value semantics: clone, contiguous, a _to_copy to the
// same dtype, a reshape/expand to the same shape, an identity permute, a full slice.

#include <numeric>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

bool same_static_sizes(const ir::TensorMeta& a, const ir::TensorMeta& b) { return a.sizes == b.sizes; }

bool is_noop(const ir::Node& node, ir::Value* self) {
  if (detail::is_op_any(node, {"aten.clone.default", "aten.contiguous.default"})) return true;
  if (detail::is_op(node, "aten._to_copy.default")) {
    const bool same_dtype =
        detail::arg_is_none(node, "dtype") || node.arg("dtype").as_scalar_type() == self->meta().dtype;
    const bool strided = detail::arg_is_none(node, "layout") || node.arg("layout").as_layout() == ir::Layout::Strided;
    return same_dtype && strided;
  }
  if (detail::is_op_any(node, {"aten.reshape.default", "aten.view.default", "aten.expand.default",
                               "aten._unsafe_view.default"})) {
    return same_static_sizes(self->meta(), node.output(0)->meta());
  }
  if (detail::is_op(node, "aten.permute.default")) {
    const auto dims = node.arg("dims").as_ints();
    for (size_t i = 0; i < dims.size(); ++i) {
      if (detail::normalize_dim(dims[i], static_cast<int64_t>(dims.size()), node) != static_cast<int64_t>(i)) {
        return false;
      }
    }
    return true;
  }
  if (detail::is_op(node, "aten.slice.Tensor")) {
    if (detail::int_arg(node, "step", 1) != 1) return false;
    const int64_t rank = self->meta().rank();
    const int64_t dim = detail::normalize_dim(detail::int_arg(node, "dim", 0), rank, node);
    const auto size = self->meta().sizes[static_cast<size_t>(dim)].as_int();
    const auto& start_arg = node.find_arg("start");
    const auto& end_arg = node.find_arg("end");
    const bool start_zero = start_arg == nullptr || start_arg->is_none() ||
                            (start_arg->kind() == ir::Argument::Kind::Int && start_arg->as_int() == 0);
    bool end_full = end_arg == nullptr || end_arg->is_none();
    if (!end_full && end_arg->kind() == ir::Argument::Kind::Int && size) end_full = end_arg->as_int() >= *size;
    return start_zero && end_full;
  }
  return false;
}

bool run_remove_noop_ops(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (node->outputs().size() != 1 || node->target().ns != "aten") continue;
    ir::Value* self = detail::tensor_arg(*node, "self");
    if (self == nullptr || !self->is_tensor()) continue;
    if (self->meta().dtype != node->output(0)->meta().dtype) continue;
    if (!is_noop(*node, self)) continue;
    // A graph input returned as a graph output needs a copy (see repair_input_as_output).
    if (self->role() == ir::ValueRole::Input && graph.is_output(node->output(0))) continue;
    detail::replace_node(graph, node, {self});
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_remove_noop_ops_pass() {
  return std::make_shared<FunctionPass>(
      "remove_noop_ops", "Removes clone, contiguous, same-dtype _to_copy, same-shape reshape/expand, identity "
      "permute and full slices.",
      run_remove_noop_ops);
}

}  // namespace kiln::lowering
