// Host side of the generic pointwise kernel (pointwise.cu): Elementwise, Activation, Unary, Cast, Select and
// FusedPointwise layers become a small program over broadcast sources. Tactic "generic".

#include "engine/backends/cuda/cuda_util.h"

namespace kiln::engine::cuda {
namespace {

/// Element strides of a source of dims `d` broadcast to output dims `out` (0 on broadcast dims).
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

class PointwiseKernel : public Kernel {
 public:
  explicit PointwiseKernel(const LayerInfo& info) {
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
    std::vector<PwInstr> prog;
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
      case LayerKind::Unary: prog.push_back(instr(kPwUnary, static_cast<int64_t>(l.get<UnaryParams>().op), 0)); break;
      case LayerKind::Cast: prog.push_back(instr(kPwCopy, 0, 0)); break;
      case LayerKind::Select: prog.push_back(instr(kPwSelect, 0, 0, 1, 2)); break;
      default: {  // FusedPointwise: inputs first, then weights as sources
        int n_in = static_cast<int>(l.inputs.size());
        auto ref = [&](int64_t r) -> int {
          if (r >= PointwiseInstr::kTemp) return kPwTemp + static_cast<int>(r - PointwiseInstr::kTemp);
          if (r >= PointwiseInstr::kWeight) return n_in + static_cast<int>(r - PointwiseInstr::kWeight);
          return static_cast<int>(r);
        };
        for (const auto& p : l.get<FusedPointwiseParams>().program) {
          int a = ref(p.operands.at(0)), b = p.operands.size() > 1 ? ref(p.operands[1]) : 0;
          switch (p.kind) {
            case LayerKind::Elementwise: prog.push_back(instr(kPwElementwise, p.op, a, b)); break;
            case LayerKind::Activation: {
              PwInstr in = instr(kPwActivation, static_cast<int64_t>(p.activation.kind), a);
              in.alpha = static_cast<float>(p.activation.alpha);
              in.beta = static_cast<float>(p.activation.beta);
              prog.push_back(in);
              break;
            }
            case LayerKind::Unary: prog.push_back(instr(kPwUnary, p.op, a)); break;
            default: prog.push_back(instr(kPwCopy, 0, a)); break;
          }
        }
        integral = is_integral(out);  // as the reference: the output dtype decides integer semantics
        for (const auto& w : l.weights) {
          weight_dims_.push_back(w.value.sizes());
          weight_dtypes_.push_back(w.value.dtype());
          weights_.push_back(upload(w.value, w.value.dtype()));
        }
        break;
      }
    }
    KILN_CHECK(prog.size() <= static_cast<size_t>(kMaxPwInstrs), Unsupported, "pointwise program too long");
    program_.n_instr = static_cast<int>(prog.size());
    for (size_t i = 0; i < prog.size(); ++i) program_.instr[i] = prog[i];
    program_.integral = integral;
    out_dtype_ = out;
    use_double_ = integral || !is_floating(out);
    for (const auto& t : info.inputs) use_double_ = use_double_ || (is_integral(t.dtype) && l.kind != LayerKind::Cast);
  }

  void execute(KernelArgs& args) const override {
    PwProgram p = program_;
    const Dims& od = args.outputs[0].dims;
    int n = 0;
    for (const auto& in : args.inputs) {
      p.src[n].data = in.data;
      p.src[n].dtype = dcode(in.dtype);
      broadcast_strides(in.dims, od, p.src[n].st);
      ++n;
    }
    for (size_t w = 0; w < weights_.size(); ++w) {
      p.src[n].data = weights_[w].data();
      p.src[n].dtype = dcode(weight_dtypes_[w]);
      broadcast_strides(weight_dims_[w], od, p.src[n].st);
      ++n;
    }
    p.n_sources = n;
    launch_pointwise(p, to_shape(od), args.outputs[0].data, dcode(out_dtype_), use_double_, stream_of(args));
    check_launch("pointwise");
  }

 private:
  PwProgram program_;
  DType out_dtype_ = DType::Float32;
  bool use_double_ = false;
  std::vector<DeviceBuffer> weights_;
  std::vector<Dims> weight_dims_;
  std::vector<DType> weight_dtypes_;
};

bool applies(const LayerInfo& layer, std::string* why) {
  if (!ranks_fit(layer, why)) return false;
  size_t sources = layer.inputs.size() + layer.layer->weights.size();
  if (sources > static_cast<size_t>(kMaxPwSources)) {
    if (why) *why = "more than 8 inputs and weights";
    return false;
  }
  if (layer.kind() == LayerKind::FusedPointwise &&
      layer.params<FusedPointwiseParams>().program.size() > static_cast<size_t>(kMaxPwInstrs)) {
    if (why) *why = "fused program longer than 32 instructions";
    return false;
  }
  return true;
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<PointwiseKernel>(layer); }

}  // namespace

void register_pointwise(std::vector<CudaKernelFactory>& rows) {
  for (LayerKind k : {LayerKind::Elementwise, LayerKind::Activation, LayerKind::Unary, LayerKind::Cast,
                      LayerKind::Select, LayerKind::FusedPointwise}) {
    rows.push_back({"generic", k, &applies, &create});
  }
}

}  // namespace kiln::engine::cuda
