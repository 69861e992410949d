// Tactic "depthwise_nhwc": 2-D depthwise convolutions (groups = input channels = output channels) of fp32 /
// fp16 / bf16 channels-last tensors through Kiln's own kernel (depthwise.cu), the bias and the post-op chain
// applied as each output is stored (when every residual has the output's dims, else by the post-op pass
// after it). Registered ahead of the cuDNN tactics: untimed builds take it, and timed builds let device
// time (and, for engines that run without CUDA graphs, the host's enqueue time) decide. Its host cost is one
// launch; cuDNN's legacy API spent 0.23-0.34 ms of the host per depthwise call (bench/gpu/README.md).

#include <cstring>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/depthwise_launch.h"
#include "engine/backends/cuda/linalg/post_ops.h"

namespace kiln::engine::cuda {
namespace {

/// Host weights [C, 1, kh, kw] reordered to [kh, kw, C] (the channel innermost, as the kernel reads them).
HostTensor to_hwc(const HostTensor& w) {
  const Dims& d = w.sizes();
  const int64_t c = d[0], taps = d[2] * d[3];
  HostTensor out(w.dtype(), {d[2], d[3], c});
  const size_t es = dtype_size(w.dtype());
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t t = 0; t < taps; ++t)
      std::memcpy(out.mutable_data() + (t * c + ch) * es, w.data() + (ch * taps + t) * es, es);
  return out;
}

int narrow(int64_t v) { return static_cast<int>(v); }

class DepthwiseKernel : public Kernel {
 public:
  explicit DepthwiseKernel(const LayerInfo& info) : p_(info.params<ConvolutionParams>()) {
    const Layer& l = *info.layer;
    dtype_ = info.outputs[0].dtype;
    weight_ = upload(to_hwc(l.weights[0].value), dtype_);
    kh_ = narrow(l.weights[0].value.sizes()[2]);
    kw_ = narrow(l.weights[0].value.sizes()[3]);
    const bool has_bias = l.weights.size() > 1 && l.weights[1].defined();
    if (has_bias) bias_ = upload(l.weights[1].value, dtype_);
    post_ = PostOpPass(p_.post_ops, 0, has_bias ? bias_.data() : nullptr, 1, 1, dtype_, true);
  }

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    if (y.numel() == 0) return;
    DepthwiseParams p;
    p.x = x.data;
    p.w = weight_.data();
    p.y = y.data;
    p.dtype = dcode(dtype_);
    p.n = narrow(x.dims[0]);
    p.c = narrow(x.dims[1]);
    p.h = narrow(x.dims[2]);
    p.w_in = narrow(x.dims[3]);
    p.oh = narrow(y.dims[2]);
    p.ow = narrow(y.dims[3]);
    p.kh = kh_;
    p.kw = kw_;
    p.sh = narrow(at(p_.stride, 0, 1));
    p.sw = narrow(at(p_.stride, 1, 1));
    p.ph = narrow(at(p_.pre_padding, 0, 0));
    p.pw = narrow(at(p_.pre_padding, 1, 0));
    p.dh = narrow(at(p_.dilation, 0, 1));
    p.dw = narrow(at(p_.dilation, 1, 1));
    // The chain runs in the kernel when the epilogue takes these arguments (every residual like the output);
    // otherwise the kernel stores the bare convolution and the post-op pass follows.
    EpilogueParams chain;
    const bool fused = post_.empty() || post_.epilogue_params(args, &chain);
    if (post_.empty()) chain = EpilogueParams{};
    launch_depthwise_nhwc(p, chain, stream_of(args));
    check_launch("depthwise convolution");
    if (!fused) post_.run(args, "depthwise convolution post-ops");
  }

 private:
  static int64_t at(const std::vector<int64_t>& v, size_t i, int64_t fill) {
    return i < v.size() ? v[i] : fill;
  }

  ConvolutionParams p_;
  DType dtype_ = DType::Float32;
  DeviceBuffer weight_, bias_;
  int kh_ = 1, kw_ = 1;
  PostOpPass post_;
};

bool applies(const LayerInfo& layer, std::string* why) {
  const auto& p = layer.params<ConvolutionParams>();
  const DType dt = layer.outputs[0].dtype;
  if (dt != DType::Float32 && dt != DType::Float16 && dt != DType::BFloat16) {
    return refuse(why, "dtype is not f32/f16/bf16");
  }
  if (p.transposed) return refuse(why, "transposed");
  const TensorInfo &x = layer.inputs[0], &y = layer.outputs[0];
  if (x.max.size() != 4 || y.max.size() != 4) return refuse(why, "not a 2-D convolution");
  const HostTensor& w = layer.layer->weights[0].value;
  if (w.sizes().size() != 4 || w.sizes()[1] != 1 || p.groups != x.max[1] || w.sizes()[0] != p.groups) {
    return refuse(why, "not depthwise (one filter per channel, as many outputs as inputs)");
  }
  for (const TensorInfo* t : {&x, &y}) {
    if (numel(t->max) >= (int64_t{1} << 31)) return refuse(why, "over 2^31 elements (32-bit index math)");
  }
  for (size_t i = 1; i < layer.inputs.size(); ++i) {
    if (layer.inputs[i].max.size() != 4) return refuse(why, "a residual that is not 4-D");
  }
  const bool bias = layer.layer->weights.size() > 1 && layer.layer->weights[1].defined();
  return PostOpPass::fits(p.post_ops.size(), bias, layer.inputs.size() - 1, why);
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<DepthwiseKernel>(layer); }

}  // namespace

void register_depthwise_conv(KernelTable& rows) {
  rows.add({.name = "depthwise_nhwc",
            .kind = LayerKind::Convolution,
            .applies = &applies,
            .create = &create,
            .formats = &all_channels_last});
}

}  // namespace kiln::engine::cuda
