// The program of a pointwise layer (see pointwise_program.h).

#include "engine/backends/cuda/pointwise/pointwise_program.h"

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "kiln/engine/pointwise_limits.h"

namespace kiln::engine::cuda {

void broadcast_strides(const Dims& d, const Dims& out, int64_t* st) {
  auto rs = row_strides(d);
  size_t r = out.size(), k0 = r - d.size();
  for (size_t k = 0; k < r; ++k) {
    st[k] = 0;
    if (k < k0) continue;
    size_t j = k - k0;
    st[k] = d[j] == 1 ? 0 : rs[j];
  }
}

PwLayerProgram pointwise_program(const LayerInfo& info) {
  const Layer& l = *info.layer;
  auto instr = [](uint8_t kind, int64_t op, int a, int b = 0, int c = 0) {
    PwInstr in;
    in.kind = kind;
    in.op = static_cast<uint8_t>(op);
    in.a = static_cast<int16_t>(a);
    in.b = static_cast<int16_t>(b);
    in.c = static_cast<int16_t>(c);
    return in;
  };
  PwLayerProgram p;
  std::vector<PwInstr>& prog = p.instr;
  DType out = info.outputs[0].dtype;
  bool integral = false;
  switch (l.kind) {
    case LayerKind::Elementwise:
      prog.push_back(instr(kPwElementwise, static_cast<int64_t>(l.get<ElementwiseParams>().op), 0, 1));
      integral = is_integral(info.inputs[0].dtype);
      break;
    case LayerKind::Activation: {
      const auto& a = l.get<ActivationParams>();
      PwInstr in = instr(kPwActivation, static_cast<int64_t>(a.kind), 0);
      in.alpha = static_cast<float>(a.alpha);
      in.beta = static_cast<float>(a.beta);
      prog.push_back(in);
      break;
    }
    case LayerKind::Unary:
      prog.push_back(instr(kPwUnary, static_cast<int64_t>(l.get<UnaryParams>().op), 0));
      break;
    case LayerKind::Cast: prog.push_back(instr(kPwCopy, 0, 0)); break;
    case LayerKind::Select: prog.push_back(instr(kPwSelect, 0, 0, 1, 2)); break;
    default: {  // FusedPointwise: inputs first, then weights as sources
      int n_in = static_cast<int>(l.inputs.size());
      // A temp of the program names the result of PointwiseInstr t: the instruction that ends it here.
      std::vector<int> last_of;
      auto ref = [&](int64_t r) -> int {
        if (r >= PointwiseInstr::kTemp)
          return kPwTemp + last_of.at(static_cast<size_t>(r - PointwiseInstr::kTemp));
        if (r >= PointwiseInstr::kWeight) return n_in + static_cast<int>(r - PointwiseInstr::kWeight);
        return static_cast<int>(r);
      };
      for (const auto& pi : l.get<FusedPointwiseParams>().program) {
        int a = ref(pi.operands.at(0)), b = pi.operands.size() > 1 ? ref(pi.operands[1]) : 0;
        switch (pi.kind) {
          case LayerKind::Elementwise: prog.push_back(instr(kPwElementwise, pi.op, a, b)); break;
          case LayerKind::Activation: {
            PwInstr in = instr(kPwActivation, static_cast<int64_t>(pi.activation.kind), a);
            in.alpha = static_cast<float>(pi.activation.alpha);
            in.beta = static_cast<float>(pi.activation.beta);
            prog.push_back(in);
            break;
          }
          case LayerKind::Unary: prog.push_back(instr(kPwUnary, pi.op, a)); break;
          case LayerKind::Select: prog.push_back(instr(kPwSelect, 0, a, b, ref(pi.operands.at(2)))); break;
          case LayerKind::Cast:
            if (static_cast<DType>(pi.op) == DType::Bool) {  // not(not(x)): 0 or 1, as storing to Bool
              prog.push_back(instr(kPwUnary, static_cast<int64_t>(UnaryOp::Not), a));
              prog.push_back(instr(kPwUnary, static_cast<int64_t>(UnaryOp::Not),
                                   kPwTemp + static_cast<int>(prog.size()) - 1));
            } else {  // the builder fuses casts between Float32 and Bool only: a float target keeps the value
              prog.push_back(instr(kPwCopy, 0, a));
            }
            break;
          default: prog.push_back(instr(kPwCopy, 0, a)); break;
        }
        last_of.push_back(static_cast<int>(prog.size()) - 1);
      }
      integral = is_integral(out);  // as the reference: the output dtype decides integer semantics
      break;
    }
  }
  KILN_CHECK(prog.size() <= static_cast<size_t>(kMaxPwInstrs), Unsupported, "pointwise program too long");
  p.integral = integral;
  p.out_dtype = out;
  for (const auto& t : info.inputs) p.source_dtypes.push_back(t.dtype);
  p.n_inputs = info.inputs.size();
  if (l.kind == LayerKind::FusedPointwise) {
    for (const auto& w : l.weights) p.source_dtypes.push_back(w.value.dtype());
  }
  // Double for integer programs: an integer output, or an integer source (a cast only stores the value). A
  // Bool output of float sources (a mask: comparisons, logical ops, selects after float math) computes in
  // float, as the reference rounds that math: in double, (x + 1e-8f) > x would be true.
  p.use_double = integral || (!is_floating(out) && out != DType::Bool);
  for (DType dt : p.source_dtypes) {
    p.use_double = p.use_double || dt == DType::Float64 || (is_integral(dt) && l.kind != LayerKind::Cast);
  }
  return p;
}

static_assert(kMaxFusedPointwiseSources <= static_cast<size_t>(kMaxPwSources) &&
                  kMaxFusedPointwiseInstrs <= static_cast<size_t>(kMaxPwInstrs),
              "the builder's fused pointwise programs must fit the kernels' argument blocks");

bool pointwise_applies(const LayerInfo& layer, std::string* why) {
  if (!ranks_fit(layer, why)) return false;
  size_t sources = layer.inputs.size() + layer.layer->weights.size();
  if (sources > static_cast<size_t>(kMaxPwSources)) return refuse(why, "more than 8 inputs and weights");
  if (layer.kind() == LayerKind::FusedPointwise) {
    size_t instrs = 0;  // a cast to Bool takes two
    for (const auto& pi : layer.params<FusedPointwiseParams>().program)
      instrs += pi.kind == LayerKind::Cast && static_cast<DType>(pi.op) == DType::Bool ? 2 : 1;
    if (instrs > static_cast<size_t>(kMaxPwInstrs))
      return refuse(why, "fused program longer than 32 instructions");
  }
  return true;
}

}  // namespace kiln::engine::cuda
