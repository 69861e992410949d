// Unary layers (params: kiln/engine/ops/pointwise/unary.h): shape inference and the reference kernel.

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/name_table.h"
#include "engine/ops/scalar_ops.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine {

const char* unary_op_name(UnaryOp op) {
  static const char* const kNames[] = {"exp",   "log",   "sqrt",  "rsqrt", "abs",   "neg",  "recip",
                                       "erf",   "sin",   "cos",   "tan",   "asin",  "acos", "atan",
                                       "sinh",  "cosh",  "floor", "ceil",  "round", "sign", "not",
                                       "expm1", "log1p", "isnan", "isinf"};
  return ops::name_of(kNames, op);
}

namespace ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Unary>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "unary needs 1 input");
  UnaryOp op = layer.get<UnaryParams>().op;
  if (op == UnaryOp::Not) {
    KILN_CHECK(in[0].dtype == DType::Bool, InvalidInput, "not needs a Bool input");
    return {{DType::Bool, in[0].dims}};
  }
  if (op == UnaryOp::Abs || op == UnaryOp::Neg || op == UnaryOp::Sign) {
    KILN_CHECK(in[0].dtype != DType::Bool, InvalidInput, unary_op_name(op), " on a Bool input");
    return {{in[0].dtype, in[0].dims}};
  }
  check_float(in[0], "input 0");
  if (op == UnaryOp::IsNan || op == UnaryOp::IsInf) return {{DType::Bool, in[0].dims}};
  return {{in[0].dtype, in[0].dims}};
}

template <>
void run_kind<LayerKind::Unary>(const Layer& layer, KernelArgs& args) {
  UnaryOp op = layer.get<UnaryParams>().op;
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  if (is_integral(x.dtype)) {  // abs, neg, sign: exactly, wrapping (infer_kind takes no other op on integers)
    parallel(args.pool, y.numel(), kPointwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) store_int(y, i, apply_unary_int(op, load_int(x, i)));
    });
    return;
  }
  unary_map(args, [&](double x) { return apply_unary(op, x); });
}

}  // namespace ops
}  // namespace kiln::engine
