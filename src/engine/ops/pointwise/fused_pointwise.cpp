// FusedPointwise layers (params: kiln/engine/ops/pointwise/fused_pointwise.h): shape inference and the
// reference kernel.

#include <algorithm>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/scalar_ops.h"

namespace kiln::engine::ops {
std::vector<DType> instruction_dtypes(const std::vector<PointwiseInstr>& program,
                                      const std::vector<DType>& inputs, const std::vector<DType>& weights) {
  std::vector<DType> out;
  out.reserve(program.size());
  auto dtype_of = [&](int64_t r) {
    if (r >= PointwiseInstr::kTemp) return out[static_cast<size_t>(r - PointwiseInstr::kTemp)];
    if (r >= PointwiseInstr::kWeight) return weights[static_cast<size_t>(r - PointwiseInstr::kWeight)];
    return inputs[static_cast<size_t>(r)];
  };
  for (const PointwiseInstr& ins : program) {
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

namespace {

/// The dtype of each of the layer's instruction results for inputs of `in` dtypes.
std::vector<DType> layer_instruction_dtypes(const Layer& layer, const std::vector<DType>& in) {
  std::vector<DType> weights;
  for (const auto& w : layer.weights) weights.push_back(w.value.dtype());
  return instruction_dtypes(layer.get<FusedPointwiseParams>().program, in, weights);
}

/// An integer step's result (see run_kind below): `source` is the dtype of its first operand, `result` its
/// own; a comparison gives 0 / 1, a cast to Float32 or Bool the integer converted (as double, rounded on).
template <class Operand, class OperandInt>
int64_t integer_step(const PointwiseInstr& in, DType source, DType result, const Operand& operand,
                     const OperandInt& operand_int) {
  switch (in.kind) {
    case LayerKind::Elementwise:
      return apply_elementwise_int(static_cast<ElementwiseOp>(in.op), operand_int(in.operands[0]),
                                   operand_int(in.operands[1]));
    case LayerKind::Unary: return apply_unary_int(static_cast<UnaryOp>(in.op), operand_int(in.operands[0]));
    case LayerKind::Select:
      return operand_int(operand_int(in.operands[0]) != 0 ? in.operands[1] : in.operands[2]);
    case LayerKind::Cast: {
      if (!is_integral(result)) return operand_int(in.operands[0]);  // converted by the caller
      if (is_integral(source)) {
        const IntRange r = int_range(result);
        return std::clamp(operand_int(in.operands[0]), r.lo, r.hi);
      }
      uint8_t element[8];  // a float or Bool source: truncated and saturated as a store does
      store_element(element, result, 0, operand(in.operands[0]));
      return load_int(TensorView{element, result, {}}, 0);
    }
    default: KILN_FAIL(InvalidInput, "an integer ", layer_kind_name(in.kind), " step");
  }
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
  return {{layer_instruction_dtypes(layer, dtypes).back(), d}};
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
  const std::vector<DType> dtypes = layer_instruction_dtypes(layer, in_dtypes);
  // Integer semantics (division, modulo) follow an instruction's first operand, as for an Elementwise layer.
  std::vector<DType> semantics(prog.size(), DType::Float32);
  for (size_t s = 0; s < prog.size(); ++s) {
    const int64_t r = prog[s].operands[0];
    semantics[s] = r >= PointwiseInstr::kTemp ? dtypes[static_cast<size_t>(r - PointwiseInstr::kTemp)]
                   : r >= PointwiseInstr::kWeight
                       ? wviews[static_cast<size_t>(r - PointwiseInstr::kWeight)].dtype
                       : in_dtypes[static_cast<size_t>(r)];
  }
  // A step that reads or yields an integer (arithmetic, abs / neg / sign, a comparison, a select of integers,
  // a cast from or to one) computes in int64, exactly, as the Elementwise, Unary and Cast layers do; its
  // result is kept as int64 and as double (for a reader that takes doubles: a cast, a select's condition).
  std::vector<bool> integer(prog.size());
  for (size_t s = 0; s < prog.size(); ++s) {
    const LayerKind k = prog[s].kind;
    integer[s] = (is_integral(semantics[s]) || is_integral(dtypes[s])) && k != LayerKind::Activation;
  }
  parallel(args.pool, y.numel(), kPointwiseGrain, [&](int64_t b, int64_t e) {
    std::vector<double> temps(prog.size());
    std::vector<int64_t> itemps(prog.size());
    for (int64_t i = b; i < e; ++i) {
      auto view_of = [&](int64_t ref, int64_t& at) -> const TensorView& {
        if (ref >= PointwiseInstr::kWeight) {
          const size_t k = static_cast<size_t>(ref - PointwiseInstr::kWeight);
          at = w_off[k][i];
          return wviews[k];
        }
        at = in_off[static_cast<size_t>(ref)][i];
        return args.inputs[static_cast<size_t>(ref)];
      };
      auto operand = [&](int64_t ref) -> double {
        if (ref >= PointwiseInstr::kTemp) return temps[ref - PointwiseInstr::kTemp];
        int64_t at = 0;
        const TensorView& t = view_of(ref, at);
        return load(t, at);
      };
      auto operand_int = [&](int64_t ref) -> int64_t {
        if (ref >= PointwiseInstr::kTemp) {
          const size_t k = static_cast<size_t>(ref - PointwiseInstr::kTemp);
          return integer[k] ? itemps[k] : static_cast<int64_t>(temps[k]);  // a Bool's 0 / 1
        }
        int64_t at = 0;
        const TensorView& t = view_of(ref, at);
        return load_int(t, at);
      };
      for (size_t s = 0; s < prog.size(); ++s) {
        const PointwiseInstr& in = prog[s];
        if (integer[s]) {
          itemps[s] = integer_step(in, semantics[s], dtypes[s], operand, operand_int);
          temps[s] = is_integral(dtypes[s]) ? static_cast<double>(itemps[s])
                                            : round_to(dtypes[s], static_cast<double>(itemps[s]));
          continue;
        }
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
      if (is_integral(y.dtype)) {
        store_int(y, i, itemps.back());
      } else {
        store(y, i, temps.back());
      }
    }
  });
}

}  // namespace kiln::engine::ops
