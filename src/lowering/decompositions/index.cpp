// index.Tensor with several consecutive integer index tensors (self[i0, i1] — how transformers builds attention
// masks) → one linear index into the indexed dims flattened: lin = (i0 mod n0) * n1 + (i1 mod n1) ..., then a
// single-index index.Tensor, which the engines take. The indexed dims must be static; `mod` wraps negative indices
// as Python does.

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;

bool decompose_index_tensor(ir::Graph& g, ir::Node* n) {
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
  std::vector<int64_t> dim_sizes;
  const auto& sizes = self->meta().sizes;
  for (size_t j = 0; j < count; ++j) {
    const ir::Value* index = indices[first + j];
    if (!is_integral(index->meta().dtype) || index->meta().dtype == DType::Bool || index->meta().dtype != index_dtype) {
      return false;
    }
    if (first + j >= sizes.size()) return false;
    auto size = sizes[first + j].as_int();
    if (!size || *size <= 0) return false;
    dim_sizes.push_back(*size);
  }

  Builder b(g, n);
  auto wrapped = [&](size_t j) {
    ir::Value* index = indices[first + j];
    return b.op("aten.remainder.Scalar", {named("self", Argument::tensor(index)), named("other", Argument::int_(dim_sizes[j]))},
                index->meta(), "remainder");
  };
  ir::Value* linear = wrapped(0);
  for (size_t j = 1; j < count; ++j) {
    ir::Value* scaled = b.mul_scalar(linear, static_cast<double>(dim_sizes[j]));
    linear = b.add(scaled, wrapped(j));
  }
  int64_t flat = 1;
  for (int64_t s : dim_sizes) flat *= s;
  std::vector<ir::SymExpr> flat_sizes(sizes.begin(), sizes.begin() + static_cast<int64_t>(first));
  flat_sizes.push_back(ir::SymExpr(flat));
  flat_sizes.insert(flat_sizes.end(), sizes.begin() + static_cast<int64_t>(first + count), sizes.end());
  auto shape = size_args(g, n, self, flat_sizes);
  if (!shape) return false;
  ir::Value* flattened = b.op("aten.reshape.default", {named("self", Argument::tensor(self)),
                                                       named("shape", sym_ints_argument(*shape))},
                              with_sizes(self->meta(), flat_sizes), "reshape");
  std::vector<ir::Value*> one(first + 1, nullptr);
  one[first] = linear;
  replace_node(g, n, {b.op("aten.index.Tensor", {named("self", Argument::tensor(flattened)),
                                                 named("indices", Argument::optional_tensors(one))},
                           n->output(0)->meta(), "index")});
  return true;
}

}  // namespace kiln::lowering::detail
