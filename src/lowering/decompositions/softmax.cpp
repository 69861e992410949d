// log_softmax(x, dim) = log(softmax(x, dim)); softmax stays whole (the engine has a fused layer for it).

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;

bool decompose_log_softmax(ir::Graph& g, ir::Node* n) {
  Builder b(g, n);
  ir::Value* x = tensor_arg(*n, "self");
  const int64_t dim = normalize_dim(n->arg("dim").as_int(), x->meta().rank(), *n);
  const DType out_dtype = n->output(0)->meta().dtype;
  if (out_dtype != x->meta().dtype) {
    // log_softmax(dtype=...) and _log_softmax(half_to_float=True) compute in the output dtype.
    x = b.op("aten._to_copy.default", to_copy_args(x, out_dtype), with_dtype(x->meta(), out_dtype), "_to_copy");
  }
  ir::Value* softmax = b.op("aten.softmax.int",
                            {named("self", Argument::tensor(x)), named("dim", Argument::int_(dim)),
                             named("dtype", Argument::none())},
                            with_sizes(x->meta(), x->meta().sizes), "softmax");
  replace_node(g, n, {b.unary("aten.log.default", softmax)});
  return true;
}

}  // namespace kiln::lowering::detail
