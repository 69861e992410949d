// slice.Tensor whose end is a SymInt known only at run time (x[:, :seq_len] of a buffer, as transformers
// slices position ids) → index_select of x with arange(start, end, step) along the dim. The engines' Slice
// layer has static bounds; arange with a SymInt end and index_select take dynamic shapes. Only when the
// symbol ranges prove that Python's clamping never applies: 0 <= start < end <= size for every value in range
// (end <= size holds when the ranges say so or when size - end is provably >= 0, as for end = s1 on a dim of
// s1 + 1). A slice from 0 with step 1 whose end is provably >= the size (end - size >= 0 over the ranges,
// e.g. the attention mask sliced to the key length, mask[:, :, :, :s1] on a dim of s1, as transformers' sdpa
// attention does) is the whole tensor: the node's users read `self` instead.

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;
using ir::SymExpr;

bool decompose_slice_symbolic_end(ir::Graph& g, ir::Node* n) {
  ir::Value* self = tensor_arg(*n, "self");
  const ir::Argument* end_arg = n->find_arg("end");
  if (self == nullptr || end_arg == nullptr || end_arg->kind() != Argument::Kind::SymInt) return false;
  const ir::SymIntArg end = end_arg->as_sym_int();
  if (!end.is_value() || !end.value->sym_value()) return false;
  const SymExpr& end_expr = *end.value->sym_value();
  if (end_expr.is_constant()) return false;  // a constant end is the Slice converter's
  for (const char* name : {"start", "step"}) {
    const ir::Argument* a = n->find_arg(name);
    if (a != nullptr && !a->is_none() && a->as_sym_int().is_value()) return false;
  }
  const int64_t rank = self->meta().rank();
  const int64_t dim = normalize_dim(int_arg(*n, "dim", 0), rank, *n);
  const int64_t start = int_arg(*n, "start", 0);
  const int64_t step = int_arg(*n, "step", 1);
  if (start < 0 || step < 1) return false;
  const SymExpr& size = self->meta().sizes[static_cast<size_t>(dim)];
  const ir::SymRanges& ranges = g.symbol_ranges();
  if (start == 0 && step == 1 && (end_expr - size).bound(ranges).min >= 0 &&
      self->meta().sizes == n->output(0)->meta().sizes && self->meta().dtype == n->output(0)->meta().dtype) {
    replace_node(g, n, {self});
    return true;
  }
  const ir::SymRange end_range = end_expr.bound(ranges);
  const ir::SymRange size_range = size.bound(ranges);
  // end > start keeps the index non-empty; end <= size means no clamping (and no out-of-range index).
  const bool within = (end_range.max != ir::SymRange::kUnbounded && end_range.max <= size_range.min) ||
                      (size - end_expr).bound(ranges).min >= 0;
  if (end_range.min <= start || !within) return false;

  Builder b(g, n);
  const SymExpr count = step == 1 ? end_expr - SymExpr(start) : n->output(0)->meta().sizes[static_cast<size_t>(dim)];
  ir::TensorMeta index_meta = with_sizes(self->meta(), {count});
  index_meta.dtype = DType::Int64;
  index_meta.strides.clear();
  ir::Value* index = b.op("aten.arange.start_step",
                          {named("start", Argument::int_(start)), named("end", *end_arg),
                           named("step", Argument::int_(step)), named("dtype", Argument::scalar_type(DType::Int64), true),
                           named("layout", Argument::none(), true), named("device", Argument::none(), true),
                           named("pin_memory", Argument::none(), true)},
                          index_meta, "arange");
  replace_node(g, n,
               {b.op("aten.index_select.default",
                     {named("self", Argument::tensor(self)), named("dim", Argument::int_(dim)),
                      named("index", Argument::tensor(index))},
                     n->output(0)->meta(), "index_select")});
  return true;
}

}  // namespace kiln::lowering::detail
