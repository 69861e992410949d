// Elementwise layers (params: kiln/engine/ops/pointwise/elementwise.h): shape inference and the reference
// kernel.

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/name_table.h"
#include "engine/ops/scalar_ops.h"

namespace kiln::engine {

const char* elementwise_op_name(ElementwiseOp op) {
  static const char* const kNames[] = {"add", "sub", "mul", "div", "floor_div", "trunc_div", "mod",
                                       "pow", "max", "min", "eq",  "ne",        "lt",        "le",
                                       "gt",  "ge",  "and", "or",  "xor"};
  return ops::name_of(kNames, op);
}

bool is_comparison(ElementwiseOp op) {
  return op >= ElementwiseOp::Equal && op <= ElementwiseOp::GreaterEqual;
}

bool is_logical(ElementwiseOp op) { return op >= ElementwiseOp::And; }

namespace ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Elementwise>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 2, InvalidInput, "elementwise needs 2 inputs");
  auto op = layer.get<ElementwiseParams>().op;
  KILN_CHECK(in[0].dtype == in[1].dtype, InvalidInput, "input dtypes differ: ", dtype_name(in[0].dtype),
             " vs ", dtype_name(in[1].dtype));
  if (is_logical(op)) {
    KILN_CHECK(in[0].dtype == DType::Bool, InvalidInput, "logical ", elementwise_op_name(op),
               " needs Bool inputs");
  } else {
    KILN_CHECK(in[0].dtype != DType::Bool || is_comparison(op), InvalidInput, "arithmetic ",
               elementwise_op_name(op), " on Bool inputs");
  }
  DType out = is_comparison(op) || is_logical(op) ? DType::Bool : in[0].dtype;
  return {{out, broadcast_dims(in[0].dims, in[1].dims)}};
}

template <>
void run_kind<LayerKind::Elementwise>(const Layer& layer, KernelArgs& args) {
  ElementwiseOp op = layer.get<ElementwiseParams>().op;
  const TensorView &a = args.inputs[0], &b = args.inputs[1], &y = args.outputs[0];
  auto oa = broadcast_offsets(a.dims, y.dims);
  auto ob = broadcast_offsets(b.dims, y.dims);
  DType dt = a.dtype;
  if (is_integral(dt)) {  // exactly, in int64 (double is inexact beyond 2^53); y is dt or Bool
    parallel(args.pool, y.numel(), kPointwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i)
        store_int(y, i, apply_elementwise_int(op, load_int(a, oa[i]), load_int(b, ob[i])));
    });
    return;
  }
  parallel(args.pool, y.numel(), kPointwiseGrain, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) store(y, i, apply_elementwise(op, load(a, oa[i]), load(b, ob[i]), dt));
  });
}

}  // namespace ops
}  // namespace kiln::engine
