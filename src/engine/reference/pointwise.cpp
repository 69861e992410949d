// Reference kernels: elementwise, activation, unary, cast, select and fused pointwise chains.

#include "engine/reference/common.h"
#include "engine/reference/reference.h"
#include "engine/reference/scalar_ops.h"

namespace kiln::engine::ref {
namespace {

constexpr int64_t kGrain = 4096;

void unary_map(KernelArgs& args, const std::function<double(double)>& f) {
  const TensorView& x = args.inputs[0];
  const TensorView& y = args.outputs[0];
  parallel(args.pool, y.numel(), kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) store(y, i, f(load(x, i)));
  });
}

void fused(const Layer& layer, KernelArgs& args) {
  const auto& prog = layer.get<FusedPointwiseParams>().program;
  const TensorView& y = args.outputs[0];
  std::vector<std::vector<int64_t>> in_off, w_off;
  for (const auto& x : args.inputs) in_off.push_back(broadcast_offsets(x.dims, y.dims));
  std::vector<TensorView> wviews;
  for (const auto& w : layer.weights) {
    wviews.push_back(TensorView{const_cast<uint8_t*>(w.value.data()), w.value.dtype(), w.value.sizes()});
    w_off.push_back(broadcast_offsets(w.value.sizes(), y.dims));
  }
  parallel(args.pool, y.numel(), kGrain, [&](int64_t b, int64_t e) {
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
            temps[s] = apply_elementwise(static_cast<ElementwiseOp>(in.op), a, operand(in.operands.at(1)), y.dtype);
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

}  // namespace

void execute_pointwise(const Layer& layer, KernelArgs& args) {
  switch (layer.kind) {
    case LayerKind::Elementwise: {
      ElementwiseOp op = layer.get<ElementwiseParams>().op;
      const TensorView &a = args.inputs[0], &b = args.inputs[1], &y = args.outputs[0];
      auto oa = broadcast_offsets(a.dims, y.dims);
      auto ob = broadcast_offsets(b.dims, y.dims);
      DType dt = a.dtype;
      parallel(args.pool, y.numel(), kGrain, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) store(y, i, apply_elementwise(op, load(a, oa[i]), load(b, ob[i]), dt));
      });
      return;
    }
    case LayerKind::Activation: {
      const auto& p = layer.get<ActivationParams>();
      unary_map(args, [&](double x) { return apply_activation(p, x); });
      return;
    }
    case LayerKind::Unary: {
      UnaryOp op = layer.get<UnaryParams>().op;
      unary_map(args, [&](double x) { return apply_unary(op, x); });
      return;
    }
    case LayerKind::Cast: unary_map(args, [](double x) { return x; }); return;
    case LayerKind::Select: {
      const TensorView &c = args.inputs[0], &a = args.inputs[1], &b = args.inputs[2], &y = args.outputs[0];
      auto oc = broadcast_offsets(c.dims, y.dims);
      auto oa = broadcast_offsets(a.dims, y.dims);
      auto ob = broadcast_offsets(b.dims, y.dims);
      size_t es = dtype_size(y.dtype);
      for (int64_t i = 0; i < y.numel(); ++i) {
        const uint8_t* src = load(c, oc[i]) != 0 ? static_cast<const uint8_t*>(a.data) + oa[i] * es
                                                 : static_cast<const uint8_t*>(b.data) + ob[i] * es;
        std::memcpy(static_cast<uint8_t*>(y.data) + i * es, src, es);
      }
      return;
    }
    case LayerKind::FusedPointwise: fused(layer, args); return;
    default: KILN_FAIL(Internal, "execute_pointwise: wrong kind ", layer_kind_name(layer.kind));
  }
}

}  // namespace kiln::engine::ref
