// index.Tensor with one boolean mask over the leading dims (self[mask], e.g. hidden[attention_mask.bool()]) →
// masked_select of self with the mask broadcast over the other (static) dims, reshaped to [count, others...].
//
// index.Tensor with several consecutive integer index tensors (self[i0, i1] — how transformers builds
// attention masks) → one linear index into the indexed dims flattened: lin = (i0 mod n0) * n1 + (i1 mod n1)
// ..., then a single-index index.Tensor, which the engines take. `mod` wraps negative indices as Python does.
//
// The indexed dims n_j may be static or symbolic. A symbolic n_j is a SymInt value (an existing one stating
// that expression, else a sym_size.int of `self`) passed as the Scalar of remainder.Scalar / mul.Scalar; the
// flattened extent n0 * n1 * ... is an _operator.mul chain of those SymInts. A symbolic n_j must be at least
// 1 over the symbol ranges (a remainder by zero is an error in torch, so the node is left alone then).

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;
using ir::SymExpr;
using ir::SymIntArg;

namespace {

Argument sym_scalar(const SymIntArg& a) {
  return a.is_value() ? Argument::sym_int(a) : Argument::int_(a.constant);
}

// a * b as a SymIntArg: folded when both are constants, else an _operator.mul node stating `product`.
SymIntArg sym_mul(ir::Graph& g, ir::Node* before, const SymIntArg& a, const SymIntArg& b,
                  const SymExpr& product) {
  if (!a.is_value() && !b.is_value()) return SymIntArg{nullptr, a.constant * b.constant};
  ir::Value* v = emit_sym(g, before, "_operator.mul", {named("a", sym_scalar(a)), named("b", sym_scalar(b))},
                          product, "mul");
  return SymIntArg{v, 0};
}

}  // namespace

namespace {

// self[mask] with one boolean mask over the leading dims of self (sizes equal to them, the other dims static):
// masked_select of self with the mask broadcast over the trailing dims, reshaped to [count, trailing dims...].
// The engines run masked_select through their output allocator.
bool decompose_bool_mask_index(ir::Graph& g, ir::Node* n) {
  ir::Value* self = tensor_arg(*n, "self");
  const ir::Argument* indices_arg = n->find_arg("indices");
  if (self == nullptr || indices_arg == nullptr) return false;
  const std::vector<ir::Value*> indices = indices_arg->as_tensors();
  if (indices.size() != 1 || indices[0] == nullptr || indices[0]->meta().dtype != DType::Bool) return false;
  ir::Value* mask = indices[0];
  const auto& sizes = self->meta().sizes;
  const int64_t k = mask->meta().rank(), rank = self->meta().rank();
  if (k == 0 || k > rank) return false;
  for (int64_t d = 0; d < k; ++d) {
    if (!(mask->meta().sizes[d] == sizes[d])) return false;
  }
  const ir::TensorMeta& out = n->output(0)->meta();
  if (out.rank() != rank - k + 1) return false;
  Builder b(g, n);
  std::vector<ir::SymIntArg> expand_sizes;
  SymExpr trailing = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < k) {
      expand_sizes.push_back(SymIntArg{nullptr, -1});
      continue;
    }
    auto c = sizes[d].as_int();
    if (!c) return false;
    expand_sizes.push_back(SymIntArg{nullptr, *c});
    trailing = SymExpr::make(SymExpr::Kind::Mul, {trailing, sizes[d]});
  }
  ir::Value* full_mask = mask;
  if (k < rank) {
    for (int64_t d = k; d < rank; ++d) full_mask = b.unsqueeze(full_mask, d);
    full_mask = b.op("aten.expand.default",
                     {named("self", Argument::tensor(full_mask)), named("size", sym_ints_argument(expand_sizes)),
                      named("implicit", Argument::bool_(false), true)},
                     with_dtype(self->meta(), DType::Bool), "expand");
  }
  ir::TensorMeta selected = out;
  selected.sizes = {k < rank ? SymExpr::make(SymExpr::Kind::Mul, {out.sizes[0], trailing}) : out.sizes[0]};
  selected.strides.clear();
  ir::Value* picked = b.op("aten.masked_select.default",
                           {named("self", Argument::tensor(self)), named("mask", Argument::tensor(full_mask))},
                           selected, "masked_select");
  if (k < rank) {
    std::vector<ir::SymIntArg> shape = {SymIntArg{nullptr, -1}};
    for (int64_t d = k; d < rank; ++d) shape.push_back(SymIntArg{nullptr, *sizes[d].as_int()});
    picked = b.op("aten.reshape.default",
                  {named("self", Argument::tensor(picked)), named("shape", sym_ints_argument(shape))}, out,
                  "reshape");
  }
  replace_node(g, n, {picked});
  return true;
}

}  // namespace

bool decompose_index_tensor(ir::Graph& g, ir::Node* n) {
  if (decompose_bool_mask_index(g, n)) return true;
  ir::Value* self = tensor_arg(*n, "self");
  const ir::Argument* indices_arg = n->find_arg("indices");
  if (self == nullptr || indices_arg == nullptr) return false;
  const std::vector<ir::Value*> indices = indices_arg->as_tensors();
  // The non-None indices: consecutive, at least two, integers of one dtype.
  size_t first = indices.size(), count = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] == nullptr) continue;  // leading and trailing Nones keep their dims
    if (count == 0) first = i;
    if (first + count != i) return false;  // separated by a None: torch moves the result dims; not handled
    ++count;
  }
  if (count < 2) return false;
  const DType index_dtype = indices[first]->meta().dtype;
  const auto& sizes = self->meta().sizes;
  for (size_t j = 0; j < count; ++j) {
    const ir::Value* index = indices[first + j];
    if (!is_integral(index->meta().dtype) || index->meta().dtype == DType::Bool ||
        index->meta().dtype != index_dtype) {
      return false;
    }
    if (first + j >= sizes.size()) return false;
    const SymExpr& size = sizes[first + j];
    if (auto c = size.as_int()) {
      if (*c <= 0) return false;
    } else if (size.bound(g.symbol_ranges()).min < 1) {
      return false;
    }
  }

  // Every dim of `self` as a SymInt argument (a dim of `self` always has one: a sym_size.int of it at worst).
  auto self_args = size_args(g, n, self, sizes);
  if (!self_args) return false;
  const auto begin = static_cast<int64_t>(first), end = static_cast<int64_t>(first + count);
  const std::vector<SymExpr> indexed(sizes.begin() + begin, sizes.begin() + end);
  const std::vector<SymIntArg> dim_args(self_args->begin() + begin, self_args->begin() + end);

  Builder b(g, n);
  auto wrapped = [&](size_t j) {
    ir::Value* index = indices[first + j];
    return b.op("aten.remainder.Scalar",
                {named("self", Argument::tensor(index)), named("other", sym_scalar(dim_args[j]))},
                index->meta(), "remainder");
  };
  ir::Value* linear = wrapped(0);
  SymIntArg flat = dim_args[0];
  SymExpr flat_expr = indexed[0];
  for (size_t j = 1; j < count; ++j) {
    ir::Value* scaled = b.op(
        "aten.mul.Scalar", {named("self", Argument::tensor(linear)), named("other", sym_scalar(dim_args[j]))},
        with_sizes(linear->meta(), linear->meta().sizes), "mul");
    linear = b.add(scaled, wrapped(j));
    flat_expr = flat_expr * indexed[j];
    flat = sym_mul(g, n, flat, dim_args[j], flat_expr);
  }
  std::vector<SymExpr> flat_sizes(sizes.begin(), sizes.begin() + begin);
  flat_sizes.push_back(flat_expr);
  flat_sizes.insert(flat_sizes.end(), sizes.begin() + end, sizes.end());
  std::vector<SymIntArg> shape(self_args->begin(), self_args->begin() + begin);
  shape.push_back(flat);
  shape.insert(shape.end(), self_args->begin() + end, self_args->end());
  ir::Value* flattened =
      b.op("aten.reshape.default",
           {named("self", Argument::tensor(self)), named("shape", sym_ints_argument(shape))},
           with_sizes(self->meta(), flat_sizes), "reshape");
  std::vector<ir::Value*> one(first + 1, nullptr);
  one[first] = linear;
  replace_node(
      g, n,
      {b.op("aten.index.Tensor",
            {named("self", Argument::tensor(flattened)), named("indices", Argument::optional_tensors(one))},
            n->output(0)->meta(), "index")});
  return true;
}

}  // namespace kiln::lowering::detail
