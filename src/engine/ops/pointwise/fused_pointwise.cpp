// FusedPointwise layers (params: kiln/engine/ops/pointwise/fused_pointwise.h): shape inference and the
// reference kernel.

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/scalar_ops.h"

namespace kiln::engine::ops {

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
      case LayerKind::Activation:
      case LayerKind::Cast: break;
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
  return {{in.empty() ? DType::Float32 : in[0].dtype, d}};
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
            temps[s] =
                apply_elementwise(static_cast<ElementwiseOp>(in.op), a, operand(in.operands.at(1)), y.dtype);
            break;
          case LayerKind::Activation: temps[s] = apply_activation(in.activation, a); break;
          case LayerKind::Unary: temps[s] = apply_unary(static_cast<UnaryOp>(in.op), a); break;
          default: temps[s] = a; break;
        }
      }
      store(y, i, temps.back());
    }
  });
}

}  // namespace kiln::engine::ops
