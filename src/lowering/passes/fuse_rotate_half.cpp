// Rotary position embeddings' rotate_half (transformers' Llama and its copies): cat([-x[..., h:], x[...,
// :h]], -1) with h half of the dim is an index remap of x with a sign, index_select(x, d, [h, ..., 2h - 1, 0,
// ..., h - 1]) * [-1, ..., -1, 1, ..., 1]: one gather instead of two slices, a negation and a concatenation,
// and the sign multiply joins the pointwise products around it (q * cos + rotate_half(q) * sin) in one fused
// kernel. Exact: a gather copies, and multiplying by -1 is negation.

#include <optional>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"
#include "kiln/support/dtype.h"

namespace kiln::lowering {
namespace {

/// `v` as slice(x, dim, start, end) with step 1 and static bounds: {x, start, end}.
struct Slice {
  ir::Value* x = nullptr;
  int64_t dim = 0, start = 0, end = 0;
};
std::optional<Slice> static_slice(ir::Value* v) {
  ir::Node* n = detail::producer_of(v, "aten.slice.Tensor");
  if (n == nullptr || detail::int_arg(*n, "step", 1) != 1) return std::nullopt;
  ir::Value* x = detail::tensor_arg(*n, "self");
  if (x == nullptr) return std::nullopt;
  for (const char* name : {"dim", "start", "end"}) {
    const ir::Argument* a = n->find_arg(name);
    if (a == nullptr || a->kind() != ir::Argument::Kind::Int) return std::nullopt;
  }
  const int64_t rank = x->meta().rank();
  const int64_t dim = detail::normalize_dim(detail::int_arg(*n, "dim", 0), rank, *n);
  return Slice{x, dim, detail::int_arg(*n, "start", 0), detail::int_arg(*n, "end", 0)};
}

bool run_fuse_rotate_half(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (!detail::is_op(*node, "aten.cat.default")) continue;
    const std::vector<ir::Value*> parts = node->arg("tensors").as_tensors();
    if (parts.size() != 2 || parts[0] == nullptr || parts[1] == nullptr) continue;
    ir::Node* neg = detail::producer_of(parts[0], "aten.neg.default");
    if (neg == nullptr) continue;
    const std::optional<Slice> upper = static_slice(detail::tensor_arg(*neg, "self")),
                               lower = static_slice(parts[1]);
    if (!upper || !lower || upper->x != lower->x || upper->dim != lower->dim) continue;
    ir::Value* x = upper->x;
    const ir::TensorMeta& meta = x->meta();
    const int64_t rank = meta.rank(), d = upper->dim;
    if (detail::normalize_dim(detail::int_arg(*node, "dim", 0), rank, *node) != d) continue;
    const std::optional<int64_t> size = meta.sizes[static_cast<size_t>(d)].as_int();
    if (!size || *size < 2 || *size % 2 != 0 || !is_floating(meta.dtype)) continue;
    const int64_t h = *size / 2;
    if (upper->start != h || upper->end != *size || lower->start != 0 || lower->end != h) continue;
    std::vector<int64_t> index(static_cast<size_t>(*size));
    std::vector<float> sign(static_cast<size_t>(*size));
    for (int64_t i = 0; i < *size; ++i) {
      index[static_cast<size_t>(i)] = i < h ? i + h : i - h;
      sign[static_cast<size_t>(i)] = i < h ? -1.0f : 1.0f;
    }
    std::vector<int64_t> sign_sizes(static_cast<size_t>(rank - d), 1);  // [2h, 1, ...]: broadcasts along d
    sign_sizes[0] = *size;
    ir::Value* index_value =
        detail::tensor_constant(graph, HostTensor::from_int64s(index, {*size}), "rotate_half_index");
    ir::Value* sign_value = detail::tensor_constant(
        graph, HostTensor::from_floats(sign, sign_sizes).to(meta.dtype), "rotate_half_sign");
    ir::Value* gathered = detail::emit(
        graph, node, "aten.index_select.default",
        {detail::named("self", ir::Argument::tensor(x)), detail::named("dim", ir::Argument::int_(d)),
         detail::named("index", ir::Argument::tensor(index_value))},
        node->output(0)->meta(), "rotate_half");
    ir::Value* rotated = detail::emit(graph, node, "aten.mul.Tensor",
                                      {detail::named("self", ir::Argument::tensor(gathered)),
                                       detail::named("other", ir::Argument::tensor(sign_value))},
                                      node->output(0)->meta(), "rotate_half_signed");
    detail::replace_node(graph, node, {rotated});
    detail::erase_dead_producers(graph, {parts[0], parts[1]}, {"aten.neg.default", "aten.slice.Tensor"});
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_fuse_rotate_half_pass() {
  return std::make_shared<FunctionPass>(
      "fuse_rotate_half",
      "Rewrites rotary embeddings' rotate_half (cat of the negated upper half and the lower half) into one "
      "index_select and a sign multiply.",
      run_fuse_rotate_half);
}

}  // namespace kiln::lowering
