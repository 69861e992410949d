// Kiln's own channels-last convolution tactics (nhwc_conv_launch.h), for the convolutions whose cuDNN calls
// cost the host far more than the GPU: cuDNN's legacy API took 0.23-0.37 ms of host time per depthwise or
// grouped call (efficientnet_b0, mobilenet_v3_large, regnet_y_1_6gf; bench/gpu/README.md), which bound every
// engine that runs without CUDA graphs. Each costs one launch:
//   "depthwise_nhwc": 2-D depthwise convolutions (groups = input channels = output channels), depthwise.cu;
//   "grouped_nhwc": 2-D grouped convolutions of 2 to kMaxGroupWidth input channels per group, grouped.cu.
// fp32 / fp16 / bf16, x, residuals and y channels-last, any padding, stride and dilation. The bias and the
// post-op chain run on the results in registers before the one store when every residual has the output's
// dims (else the post-op pass follows). Registered ahead of the cuDNN tactics: untimed builds take them, and
// timed builds let device time (and, for engines that run without CUDA graphs, the host's enqueue time)
// decide.

#include <cstring>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/nhwc_conv_launch.h"
#include "engine/backends/cuda/linalg/post_ops.h"

namespace kiln::engine::cuda {
namespace {

/// Input channels per group above which "grouped_nhwc" declines: its products run on the CUDA cores, where
/// cuDNN's tensor-core convolutions win for wide groups.
constexpr int64_t kMaxGroupWidth = 64;

/// Host weights [K, C/g, kh, kw] reordered to [kh, kw, C/g, K] (the output channel innermost, as both kernels
/// read them; depthwise: [kh, kw, 1, C]).
HostTensor taps_first(const HostTensor& w) {
  const Dims& d = w.sizes();
  const int64_t k = d[0], cg = d[1], taps = d[2] * d[3];
  HostTensor out(w.dtype(), {d[2], d[3], cg, k});
  const size_t es = dtype_size(w.dtype());
  for (int64_t o = 0; o < k; ++o)
    for (int64_t i = 0; i < cg; ++i)
      for (int64_t t = 0; t < taps; ++t)
        std::memcpy(out.mutable_data() + ((t * cg + i) * k + o) * es,
                    w.data() + ((o * cg + i) * taps + t) * es, es);
  return out;
}

int narrow(int64_t v) { return static_cast<int>(v); }
int64_t at(const std::vector<int64_t>& v, size_t i, int64_t fill) { return i < v.size() ? v[i] : fill; }

using Launch = void (*)(const NhwcConvParams&, const EpilogueParams&, Stream);

class NhwcConvKernel : public Kernel {
 public:
  NhwcConvKernel(const LayerInfo& info, Launch launch)
      : p_(info.params<ConvolutionParams>()), launch_(launch) {
    const Layer& l = *info.layer;
    dtype_ = info.outputs[0].dtype;
    weight_ = upload(taps_first(l.weights[0].value), dtype_);
    kh_ = narrow(l.weights[0].value.sizes()[2]);
    kw_ = narrow(l.weights[0].value.sizes()[3]);
    const bool has_bias = l.weights.size() > 1 && l.weights[1].defined();
    if (has_bias) bias_ = upload(l.weights[1].value, dtype_);
    post_ = PostOpPass(p_.post_ops, 0, has_bias ? bias_.data() : nullptr, 1, 1, dtype_, true);
  }

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    if (y.numel() == 0) return;
    NhwcConvParams p;
    p.x = x.data;
    p.w = weight_.data();
    p.y = y.data;
    p.dtype = dcode(dtype_);
    p.n = narrow(x.dims[0]);
    p.c_in = narrow(x.dims[1]);
    p.h = narrow(x.dims[2]);
    p.w_in = narrow(x.dims[3]);
    p.c_out = narrow(y.dims[1]);
    p.groups = narrow(p_.groups);
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
    launch_(p, chain, stream_of(args));
    check_launch("convolution");
    if (!fused) post_.run(args, "convolution post-ops");
  }

 private:
  ConvolutionParams p_;
  Launch launch_;
  DType dtype_ = DType::Float32;
  DeviceBuffer weight_, bias_;
  int kh_ = 1, kw_ = 1;
  PostOpPass post_;
};

/// What both tactics take: fp32/fp16/bf16 2-D forward convolutions with at most 2^31 elements per tensor and
/// a post-op chain the pass takes.
bool applies(const LayerInfo& layer, std::string* why) {
  const auto& p = layer.params<ConvolutionParams>();
  const DType dt = layer.outputs[0].dtype;
  if (dt != DType::Float32 && dt != DType::Float16 && dt != DType::BFloat16) {
    return refuse(why, "dtype is not f32/f16/bf16");
  }
  if (p.transposed) return refuse(why, "transposed");
  for (const auto* list : {&layer.inputs, &layer.outputs}) {
    for (const TensorInfo& t : *list) {
      if (t.max.size() != 4) return refuse(why, "not a 2-D convolution ('" + t.name + "' is not 4-D)");
      if (numel(t.max) >= (int64_t{1} << 31)) return refuse(why, "over 2^31 elements (32-bit index math)");
    }
  }
  const bool bias = layer.layer->weights.size() > 1 && layer.layer->weights[1].defined();
  return PostOpPass::fits(p.post_ops.size(), bias, layer.inputs.size() - 1, why);
}

bool applies_depthwise(const LayerInfo& layer, std::string* why) {
  if (!applies(layer, why)) return false;
  const auto& p = layer.params<ConvolutionParams>();
  const Dims& w = layer.layer->weights[0].value.sizes();
  if (w[1] != 1 || p.groups != layer.inputs[0].max[1] || w[0] != p.groups) {
    return refuse(why, "not depthwise (one filter per channel, as many outputs as inputs)");
  }
  return true;
}

bool applies_grouped(const LayerInfo& layer, std::string* why) {
  if (!applies(layer, why)) return false;
  const auto& p = layer.params<ConvolutionParams>();
  const int64_t width = layer.layer->weights[0].value.sizes()[1];
  if (p.groups < 2 || width < 2) return refuse(why, "not grouped with 2 or more input channels per group");
  if (width > kMaxGroupWidth) {
    return refuse(why, "groups of " + std::to_string(width) +
                           " input channels (cuDNN's tensor cores win over " +
                           std::to_string(kMaxGroupWidth) + ")");
  }
  return true;
}

std::unique_ptr<Kernel> create_depthwise(const LayerInfo& layer) {
  return std::make_unique<NhwcConvKernel>(layer, &launch_depthwise_nhwc);
}
std::unique_ptr<Kernel> create_grouped(const LayerInfo& layer) {
  return std::make_unique<NhwcConvKernel>(layer, &launch_grouped_nhwc);
}

}  // namespace

void register_nhwc_conv(KernelTable& rows) {
  rows.add({.name = "depthwise_nhwc",
            .kind = LayerKind::Convolution,
            .applies = &applies_depthwise,
            .create = &create_depthwise,
            .formats = &all_channels_last});
  rows.add({.name = "grouped_nhwc",
            .kind = LayerKind::Convolution,
            .applies = &applies_grouped,
            .create = &create_grouped,
            .formats = &all_channels_last});
}

}  // namespace kiln::engine::cuda
