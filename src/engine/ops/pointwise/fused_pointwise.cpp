// FusedPointwise layers (params: kiln/engine/ops/pointwise/fused_pointwise.h): shape inference and the
// reference kernel.

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/scalar_ops.h"

namespace kiln::engine::ops {
namespace {

/// The dtype of each instruction's result (see PointwiseInstr) for inputs of `in` dtypes; operands were
/// validated before.
std::vector<DType> instruction_dtypes(const Layer& layer, const std::vector<DType>& in) {
  const auto& prog = layer.get<FusedPointwiseParams>().program;
  std::vector<DType> out;
  out.reserve(prog.size());
  auto dtype_of = [&](int64_t r) {
    if (r >= PointwiseInstr::kTemp) return out[static_cast<size_t>(r - PointwiseInstr::kTemp)];
    if (r >= PointwiseInstr::kWeight)
      return layer.weights[static_cast<size_t>(r - PointwiseInstr::kWeight)].value.dtype();
    return in[static_cast<size_t>(r)];
  };
  for (const PointwiseInstr& ins : prog) {
    DType d = dtype_of(ins.operands[0]);
    switch (ins.kind) {
      case LayerKind::Elementwise: {
        const auto op = static_cast<ElementwiseOp>(ins.op);
        if (is_comparison(op) || is_logical(op)) d = DType::Bool;
        break;
      }
      case LayerKind::Unary: {
        const auto op = static_cast<UnaryOp>(ins.op);
        if (op == UnaryOp::Not || op == UnaryOp::IsNan || op == UnaryOp::IsInf) d = DType::Bool;
        break;
      }
      case LayerKind::Cast: d = static_cast<DType>(ins.op); break;
      case LayerKind::Select: d = dtype_of(ins.operands[1]); break;
      default: break;
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace

template <>
std::vector<ShapeOut> infer_kind<LayerKind::FusedPointwise>(const Layer& layer,
                                                            const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<FusedPointwiseParams>();
  KILN_CHECK(!p.program.empty(), InvalidInput, "empty pointwise program");
  for (size_t i = 0; i < p.program.size(); ++i) {
    const PointwiseInstr& ins = p.program[i];
    size_t arity = 1;
    switch (ins.kind) {
      case LayerKind::Elementwise:
        KILN_CHECK(ins.op >= 0 && ins.op <= static_cast<int64_t>(ElementwiseOp::Xor), InvalidInput,
                   "bad pointwise op");
        arity = 2;
        break;
      case LayerKind::Unary:
        KILN_CHECK(ins.op >= 0 && ins.op <= static_cast<int64_t>(UnaryOp::IsInf), InvalidInput,
                   "bad pointwise op");
        break;
      case LayerKind::Cast:
        KILN_CHECK(ins.op >= 0 && ins.op <= static_cast<int64_t>(DType::Bool), InvalidInput,
                   "bad pointwise cast target");
        break;
      case LayerKind::Select: arity = 3; break;
      case LayerKind::Activation: break;
      default: KILN_FAIL(InvalidInput, "pointwise instruction of kind ", layer_kind_name(ins.kind));
    }
    KILN_CHECK(ins.operands.size() == arity, InvalidInput, "pointwise instruction ", i, " has ",
               ins.operands.size(), " operands, expected ", arity);
    for (int64_t r : ins.operands) {
      bool ok = (r >= PointwiseInstr::kTemp && r - PointwiseInstr::kTemp < static_cast<int64_t>(i)) ||
                (r >= PointwiseInstr::kWeight && r < PointwiseInstr::kTemp &&
                 r - PointwiseInstr::kWeight < static_cast<int64_t>(layer.weights.size())) ||
                (r >= 0 && r < PointwiseInstr::kWeight && r < static_cast<int64_t>(in.size()));
      KILN_CHECK(ok, InvalidInput, "pointwise instruction ", i, " has a bad operand ", r);
    }
  }
  for (const auto& w : layer.weights) KILN_CHECK(w.defined(), InvalidInput, "pointwise weight undefined");
  Dims d;
  for (const auto& x : in) d = broadcast_dims(d, x.dims);
  for (const auto& w : layer.weights) d = broadcast_dims(d, w.value.sizes());
  std::vector<DType> dtypes;
  for (const auto& x : in) dtypes.push_back(x.dtype);
  return {{instruction_dtypes(layer, dtypes).back(), d}};
}

template <>
void run_kind<LayerKind::FusedPointwise>(const Layer& layer, KernelArgs& args) {
  const auto& prog = layer.get<FusedPointwiseParams>().program;
  const TensorView& y = args.outputs[0];
  std::vector<std::vector<int64_t>> in_off, w_off;
  for (const auto& x : args.inputs) in_off.push_back(broadcast_offsets(x.dims, y.dims));
  std::vector<TensorView> wviews;
  for (const auto& w : layer.weights) {
    wviews.push_back(TensorView{const_cast<uint8_t*>(w.value.data()), w.value.dtype(), w.value.sizes()});
    w_off.push_back(broadcast_offsets(w.value.sizes(), y.dims));
  }
  std::vector<DType> in_dtypes;
  for (const auto& x : args.inputs) in_dtypes.push_back(x.dtype);
  const std::vector<DType> dtypes = instruction_dtypes(layer, in_dtypes);
  // Integer semantics (division, modulo) follow an instruction's first operand, as for an Elementwise layer.
  std::vector<DType> semantics(prog.size(), DType::Float32);
  for (size_t s = 0; s < prog.size(); ++s) {
    const int64_t r = prog[s].operands[0];
    semantics[s] = r >= PointwiseInstr::kTemp ? dtypes[static_cast<size_t>(r - PointwiseInstr::kTemp)]
                   : r >= PointwiseInstr::kWeight
                       ? wviews[static_cast<size_t>(r - PointwiseInstr::kWeight)].dtype
                       : in_dtypes[static_cast<size_t>(r)];
  }
  parallel(args.pool, y.numel(), kPointwiseGrain, [&](int64_t b, int64_t e) {
    std::vector<double> temps(prog.size());
    for (int64_t i = b; i < e; ++i) {
      auto operand = [&](int64_t ref) -> double {
        if (ref >= PointwiseInstr::kTemp) return temps[ref - PointwiseInstr::kTemp];
        if (ref >= PointwiseInstr::kWeight) {
          int64_t k = ref - PointwiseInstr::kWeight;
          return load(wviews[k], w_off[k][i]);
        }
        return load(args.inputs[ref], in_off[ref][i]);
      };
      for (size_t s = 0; s < prog.size(); ++s) {
        const PointwiseInstr& in = prog[s];
        double a = operand(in.operands.at(0));
        switch (in.kind) {
          case LayerKind::Elementwise:
            temps[s] = apply_elementwise(static_cast<ElementwiseOp>(in.op), a, operand(in.operands.at(1)),
                                         semantics[s]);
            break;
          case LayerKind::Activation: temps[s] = apply_activation(in.activation, a); break;
          case LayerKind::Unary: temps[s] = apply_unary(static_cast<UnaryOp>(in.op), a); break;
          case LayerKind::Select: temps[s] = operand(a != 0 ? in.operands.at(1) : in.operands.at(2)); break;
          case LayerKind::Cast: temps[s] = round_to(dtypes[s], a); break;
          default: temps[s] = a; break;
        }
      }
      store(y, i, temps.back());
    }
  });
}

}  // namespace kiln::engine::ops
