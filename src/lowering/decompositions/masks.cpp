// masked_fill → where; tril/triu → where with a constant mask (static last two dims).

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

using ir::Argument;

bool decompose_masked_fill(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  ir::Value* mask = tensor_arg(*n, "mask");
  const ir::Argument& value = n->arg("value");
  Builder b(g, n);
  ir::Value* fill = nullptr;
  if (value.kind() == Argument::Kind::Tensor) {
    fill = value.as_tensor();
    if (fill->meta().dtype != x->meta().dtype) {
      fill = b.op("aten._to_copy.default", to_copy_args(fill, x->meta().dtype), with_dtype(fill->meta(), x->meta().dtype),
                  "_to_copy");
    }
  } else {
    fill = scalar_constant(g, x->meta().dtype, value.as_float(), "masked_fill_value");
  }
  replace_node(g, n, {b.where(mask, fill, x, n->output(0)->meta())});
  return true;
}

bool decompose_tril_triu(ir::Graph& g, ir::Node* n) {
  ir::Value* x = tensor_arg(*n, "self");
  const int64_t rank = x->meta().rank();
  if (rank < 2) return false;
  auto rows = x->meta().sizes[static_cast<size_t>(rank - 2)].as_int();
  auto cols = x->meta().sizes[static_cast<size_t>(rank - 1)].as_int();
  if (!rows || !cols) return false;
  const int64_t diagonal = int_arg(*n, "diagonal", 0);
  const bool lower = n->target().name == "tril";
  HostTensor keep(DType::Bool, {*rows, *cols});
  for (int64_t i = 0; i < *rows; ++i) {
    for (int64_t j = 0; j < *cols; ++j) {
      const bool k = lower ? j - i <= diagonal : j - i >= diagonal;
      keep.set_from_double(i * *cols + j, k ? 1.0 : 0.0);
    }
  }
  Builder b(g, n);
  ir::Value* mask = tensor_constant(g, std::move(keep), n->target().name + "_mask");
  ir::Value* zero = scalar_constant(g, x->meta().dtype, 0.0, n->target().name + "_zero");
  replace_node(g, n, {b.where(mask, x, zero, n->output(0)->meta())});
  return true;
}

}  // namespace kiln::lowering::detail
