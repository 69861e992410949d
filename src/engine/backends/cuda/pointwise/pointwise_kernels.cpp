// Host side of the generic pointwise kernel (pointwise.cu): Elementwise, Activation, Unary, Cast, Select and
// FusedPointwise layers become a small program over broadcast sources (pointwise_program.h), interpreted per
// element. Tactic "generic"; the NVRTC-compiled tactic "nvrtc" (nvrtc_kernels.cpp) registers here too. Both
// follow a ChannelsLast input (follow_channels_last.h) and then address every operand in storage order.

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "engine/backends/cuda/pointwise/pointwise_program.h"
#include "engine/backends/follow_channels_last.h"

namespace kiln::engine::cuda {

void register_nvrtc_pointwise(KernelTable& rows);

namespace {

class PointwiseKernel : public Kernel {
 public:
  explicit PointwiseKernel(const LayerInfo& info) {
    PwLayerProgram prog = pointwise_program(info);
    program_.n_instr = static_cast<int>(prog.instr.size());
    for (size_t i = 0; i < prog.instr.size(); ++i) program_.instr[i] = prog.instr[i];
    program_.integral = prog.integral;
    out_dtype_ = prog.out_dtype;
    use_double_ = prog.use_double;
    if (info.kind() == LayerKind::FusedPointwise) {
      for (const auto& w : info.layer->weights) {
        weight_dims_.push_back(w.value.sizes());
        weight_dtypes_.push_back(w.value.dtype());
        weights_.push_back(upload(w.value, w.value.dtype()));
      }
    }
  }

  void execute(KernelArgs& args) const override {
    PwProgram p = program_;
    // Dims in the output's storage order (a ChannelsLast layer runs over [N, spatial..., C]).
    const TensorView& y = args.outputs[0];
    const size_t rank = y.dims.size();
    const auto order = [&](const Dims& d, TensorFormat f) {
      return pointwise_operand_dims(d, f, y.format, rank);
    };
    const Dims od = order(y.dims, y.format);
    int n = 0;
    for (const auto& in : args.inputs) {
      p.src[n].data = in.data;
      p.src[n].dtype = dcode(in.dtype);
      broadcast_strides(order(in.dims, in.format), od, p.src[n].st);
      ++n;
    }
    for (size_t w = 0; w < weights_.size(); ++w) {
      p.src[n].data = weights_[w].data();
      p.src[n].dtype = dcode(weight_dtypes_[w]);
      broadcast_strides(order(weight_dims_[w], TensorFormat::Plain), od, p.src[n].st);
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

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<PointwiseKernel>(layer); }

}  // namespace

void register_pointwise(KernelTable& rows) {
  // The compiled kernels first: the best guess when tactics are not timed.
  register_nvrtc_pointwise(rows);
  for (LayerKind k : {LayerKind::Elementwise, LayerKind::Activation, LayerKind::Unary, LayerKind::Cast,
                      LayerKind::Select, LayerKind::FusedPointwise}) {
    rows.add({"generic", k, &pointwise_applies, &create, &pointwise_formats});
  }
}

}  // namespace kiln::engine::cuda
