// any/all reductions → ne(x, 0) as float, amax/amin over the dims, ne(result, 0): the engines reduce floats, and a
// maximum of 0/1 values is their logical or (a minimum their logical and).

#include <numeric>

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;

bool decompose_any_all(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const int64_t rank = x->meta().rank();
  std::vector<int64_t> dims;
  const ir::Argument* dim = n->find_arg("dim");
  if (dim == nullptr || dim->is_none()) {
    dims.resize(static_cast<size_t>(rank));
    std::iota(dims.begin(), dims.end(), 0);
  } else if (n->target().overload == "dims") {
    for (int64_t d : dim->as_ints()) dims.push_back(normalize_dim(d, rank, *n));
  } else {
    dims.push_back(normalize_dim(dim->as_int(), rank, *n));
  }
  const bool keepdim = bool_arg(*n, "keepdim", false);
  const bool any = n->target().name == "any";
  Builder b(g, n);
  ir::Value* nonzero = b.op("aten.ne.Scalar", {named("self", Argument::tensor(x)), named("other", Argument::int_(0))},
                            with_dtype(x->meta(), DType::Bool), "ne");
  ir::Value* as_float = b.op("aten._to_copy.default", to_copy_args(nonzero, DType::Float32),
                             with_dtype(nonzero->meta(), DType::Float32), "_to_copy");
  ir::Value* reduced = b.op(any ? "aten.amax.default" : "aten.amin.default",
                            {named("self", Argument::tensor(as_float)), named("dim", Argument::ints(dims)),
                             named("keepdim", Argument::bool_(keepdim))},
                            with_dtype(n->output(0)->meta(), DType::Float32), any ? "amax" : "amin");
  replace_node(g, n, {b.op("aten.ne.Scalar", {named("self", Argument::tensor(reduced)), named("other", Argument::int_(0))},
                           n->output(0)->meta(), "ne")});
  return true;
}

}  // namespace kiln::lowering::detail
