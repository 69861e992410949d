// oneDNN convolution and deconvolution (1-3 spatial dims, groups, dilation, asymmetric padding) with fused
// bias, eltwise post-ops and a residual sum.
//
// Three tactics:
//   "onednn"          reads and writes Plain (NC...) activations;
//   "onednn_blocked"  prefers the activation formats the primitive picks for itself at the profile's opt
//                     shape (e.g. nChw16c) and reads/writes whatever formats the plan gives it: the builder
//                     passes blocked tensors between consecutive convolutions and reorders only where a
//                     neighbour needs another format. The residual input has the output's format.
//   "onednn_winograd" like "onednn_blocked" with oneDNN's Winograd algorithm (3x3, stride 1, no dilation or
//                     groups, where this CPU has it): fewer multiplications, results differ from the direct
//                     sums by a few float ulps of the partial sums (the transforms reassociate them).
// Both prepare the weights once, in the layout the primitive prefers at the profile's opt shape. Primitives
// are cached per input shape in the per-context state. A direct convolution with ReLU post-ops runs them as
// oneDNN's relu where max_relu.h proves that exact for the call's input (a second primitive per shape).

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "engine/backends/cpu/onednn/conv_geometry.h"
#include "engine/backends/cpu/onednn/max_relu.h"
#include "engine/backends/cpu/onednn/onednn_common.h"
#include "engine/backends/cpu/onednn/register.h"
#include "engine/ops/shape_inference.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::onednn {
namespace {

/// Everything needed to run the primitive for one input shape.
using ConvEntry = ConvPrimitive;

struct ConvState : KernelState {
  std::map<Dims, std::unique_ptr<ConvEntry>> entries, max_relu_entries;
  dnnl::stream stream{cpu_engine()};
};

/// The formats the primitive picks for itself at the opt shape. Where that is Plain in and out (oneDNN's
/// sgemm on plain tensors, or a layout Kiln has no format for, such as the 4-channel blocks of resnext50's
/// groups), this tactic would be the plain one again: channels-last instead where oneDNN has a direct
/// implementation for it (here, 2x128x56x56 in 32 groups: jit:avx512_core in nhwc 1.43 ms, gemm:jit in
/// nchw 5.5 ms; wav2vec2-base's positional convolution, 768 channels in 16 groups, kernel 128: brgconv in
/// nwc 1.5 ms, gemm:jit 13.2 ms). Where oneDNN's sgemm cannot run (sgemm_runs), plain tensors would get
/// oneDNN's reference convolution.
TacticFormats preferred_formats(const LayerInfo& info, bool winograd) {
  ConvGeometry geo(*info.layer, winograd);
  const Dims& x = info.inputs[0].opt;
  const Dims& y = info.outputs[0].opt;
  dnnl::primitive_desc pd;
  try {
    pd = geo.make_pd(memory::desc(to_dnnl_dims(x), DT::f32, Tag::any),
                     memory::desc(to_dnnl_dims(y), DT::f32, Tag::any));
  } catch (const dnnl::error& e) {
    // (Winograd where this CPU has none; a deconvolution whose only implementation is on sgemm where that
    // cannot run.)
    KILN_FAIL(Unsupported, "convolution '", info.layer->name,
              "': oneDNN has no primitive for it: ", e.what());
  }
  TensorFormat src = format_of(pd.src_desc(), x), dst = format_of(pd.dst_desc(), y);
  if (src == TensorFormat::Plain && dst == TensorFormat::Plain && !winograd &&
      format_applies(TensorFormat::ChannelsLast, x.size())) {
    try {
      auto cl = geo.make_pd(activation_md(x, DT::f32, TensorFormat::ChannelsLast),
                            activation_md(y, DT::f32, TensorFormat::ChannelsLast));
      const std::string impl = cl.impl_info_str();
      if (!built_on_sgemm(impl) && !is_reference_impl(impl)) src = dst = TensorFormat::ChannelsLast;
    } catch (const dnnl::error&) {
      // no channels-last implementation: Plain
    }
  }
  TacticFormats f;
  f.inputs.assign(info.inputs.size(), dst);  // residuals are read in the output's format
  f.inputs[0] = src;
  f.outputs = {dst};
  return f;
}

class ConvolutionKernel : public Kernel {
 public:
  ConvolutionKernel(const LayerInfo& info, bool winograd)
      : geo_(*info.layer, winograd), max_relu_(MaxRelu::for_convolution(*info.layer, winograd)) {
    const Layer& layer = *info.layer;
    src_format_ = info.inputs[0].format;
    dst_format_ = info.outputs[0].format;
    if (geo_.residual_input >= 0) {
      const TensorInfo& r = info.inputs[static_cast<size_t>(geo_.residual_input)];
      KILN_CHECK(r.format == dst_format_, InvalidInput, "convolution '", layer.name, "': residual '", r.name,
                 "' is in format ", tensor_format_name(r.format), " but the output in ",
                 tensor_format_name(dst_format_));
    }
    weight_values_ = weights_as_floats(layer.weights[0].value);
    macs_per_element_ = macs_per_element(layer);
    if (layer.weights.size() > 1 && layer.weights[1].defined()) bias_values_ = weights_as_floats(layer.weights[1].value);

    // Prepare the weights for the opt shape's primitive.
    try {
      auto pd = make_pd(info.inputs[0].opt, info.outputs[0].opt);
      require_optimized(info, pd, "convolution '" + layer.name + "' in formats " + tensor_format_name(src_format_) +
                                " -> " + tensor_format_name(dst_format_));
      prepared_md_ = pd.weights_desc();
      prepared_ = reorder_weights(prepared_md_);
    } catch (const dnnl::error& e) {
      KILN_FAIL(Unsupported, "convolution '", layer.name, "': oneDNN has no primitive for formats ",
                tensor_format_name(src_format_), " -> ", tensor_format_name(dst_format_), ": ", e.what());
    }
  }

  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<ConvState>(); }

  void execute(KernelArgs& args) const override {
    auto* state = static_cast<ConvState*>(args.state);
    KILN_CHECK(state != nullptr, Internal, "oneDNN convolution executed without its state");
    const TensorView& x = args.inputs[0];
    const TensorView& y = args.outputs[0];
    KILN_CHECK(x.format == src_format_ && y.format == dst_format_, Internal, "oneDNN convolution got formats ",
               tensor_format_name(x.format), " -> ", tensor_format_name(y.format));
    // The thread count first: oneDNN sizes a primitive's scratchpad and work split for the threads it is
    // created with, and running it with more fails ("could not execute a primitive").
    use_threads(threads_for_work(args.pool, conv_macs(x, y),
                                 static_cast<double>(x.nbytes() + y.nbytes() + weight_values_.size() * sizeof(float))));
    const TensorView* r = geo_.residual_input >= 0 ? &args.inputs[geo_.residual_input] : nullptr;
    const bool max_relu = max_relu_ && max_relu_->holds(x, r, args.pool);
    ConvEntry& e = entry_for_shape((max_relu ? state->max_relu_entries : state->entries)[x.dims], "convolution",
                                   [&] { return make_entry(x.dims, y.dims, max_relu); });
    dnnl::stream& s = state->stream;

    if (r != nullptr && r->data != y.data) std::memcpy(y.data, r->data, y.nbytes());
    std::unordered_map<int, memory> margs{{DNNL_ARG_SRC, memory(e.src_md, cpu_engine(), x.data)},
                                          {DNNL_ARG_WEIGHTS, *e.weights},
                                          {DNNL_ARG_DST, memory(e.dst_md, cpu_engine(), y.data)},
                                          {DNNL_ARG_SCRATCHPAD, e.scratchpad}};
    if (!bias_values_.empty()) {
      margs.emplace(DNNL_ARG_BIAS, memory(geo_.bias_md, cpu_engine(), const_cast<float*>(bias_values_.data())));
    }
    try {
      e.conv.execute(s, margs);
      s.wait();
    } catch (const dnnl::error& err) {
      KILN_FAIL(Internal, "oneDNN convolution (implementation '", e.impl, "', status ", static_cast<int>(err.status),
                ", ", threads_text(), "): ", err.what());
    }
  }

 private:
  dnnl::primitive_desc make_pd(const Dims& x, const Dims& y, bool max_relu = false) const {
    return geo_.make_pd(activation_md(x, DT::f32, src_format_), activation_md(y, DT::f32, dst_format_),
                        max_relu ? &max_relu_->attr() : nullptr);
  }

  std::shared_ptr<memory> reorder_weights(const memory::desc& md) const {
    return reordered_copy(geo_.weights_user_md, weight_values_.data(), md);
  }

  std::unique_ptr<ConvEntry> make_entry(const Dims& x, const Dims& y, bool max_relu) const {
    return std::make_unique<ConvEntry>(make_pd(x, y, max_relu), prepared_md_, prepared_,
                                       [&](const memory::desc& md) { return reorder_weights(md); });
  }

  /// Multiply-accumulates per element of y (per element of x when transposed).
  double conv_macs(const TensorView& x, const TensorView& y) const {
    return static_cast<double>(geo_.p.transposed ? x.numel() : y.numel()) * macs_per_element_;
  }

  ConvGeometry geo_;
  std::optional<MaxRelu> max_relu_;
  double macs_per_element_ = 0.0;
  TensorFormat src_format_ = TensorFormat::Plain, dst_format_ = TensorFormat::Plain;
  memory::desc prepared_md_;
  std::vector<float> weight_values_, bias_values_;
  std::shared_ptr<memory> prepared_;
};

bool conv_applies(const LayerInfo& info, std::string* why) {
  const Layer& layer = *info.layer;
  const auto& p = layer.get<ConvolutionParams>();
  if (layer.weights.empty() || !layer.weights[0].defined() || !is_floating(layer.weights[0].value.dtype())) {
    return refuse(why, "no floating-point kernel weight");
  }
  int64_t ns = layer.weights[0].value.dim() - 2;
  if (ns < 1 || ns > 3) return refuse(why, std::to_string(ns) + " spatial dims (onednn takes 1 to 3)");
  if (!onednn_dtype_ok(info.inputs[0].dtype, why) || !onednn_dtype_ok(info.outputs[0].dtype, why)) {
    return false;
  }
  if (!post_ops_supported(p.post_ops, why)) return false;
  if (count_sum_post_ops(p.post_ops) > 0) {
    const TensorInfo& r = info.inputs[static_cast<size_t>(first_residual_input(layer))];
    if (r.dtype != info.outputs[0].dtype || !same_dims(r, info.outputs[0])) {
      return refuse(why, "a residual of another dtype or dims than the output");
    }
  }
  if (p.transposed) {
    // oneDNN takes the output padding as negative right padding; keep it within the padding.
    for (size_t i = 0; i < p.output_padding.size(); ++i) {
      int64_t post = i < p.post_padding.size() ? p.post_padding[i] : 0;
      if (p.output_padding[i] > post) return refuse(why, "output padding beyond the padding");
    }
  }
  return true;
}

/// Winograd: 2-D 3x3 stride-1 undilated ungrouped convolutions for which oneDNN has an implementation here.
bool winograd_applies(const LayerInfo& info, std::string* why) {
  if (!conv_applies(info, why)) return false;
  const Layer& layer = *info.layer;
  const auto& p = layer.get<ConvolutionParams>();
  const auto& w = layer.weights[0].value.sizes();
  auto all = [](const std::vector<int64_t>& v, int64_t x) {
    return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
  };
  if (p.transposed || p.groups != 1 || w.size() != 4 || w[2] != 3 || w[3] != 3 || !all(p.stride, 1) ||
      !all(p.dilation, 1)) {
    return refuse(why, "not a 2-D 3x3 stride-1 undilated ungrouped forward convolution");
  }
  try {
    preferred_formats(info, true);
    return true;
  } catch (const Error&) {
    return refuse(why, "no Winograd implementation for this shape on this CPU");
  }
}

}  // namespace

void register_onednn_convolution(KernelTable& registry) {
  auto direct = [](const LayerInfo& info) { return std::unique_ptr<Kernel>(std::make_unique<ConvolutionKernel>(info, false)); };
  auto winograd = [](const LayerInfo& info) { return std::unique_ptr<Kernel>(std::make_unique<ConvolutionKernel>(info, true)); };
  // Untimed builds take the last row first: "onednn_blocked" (direct convolution applies everywhere).
  registry.add(KernelRow{"onednn", LayerKind::Convolution, conv_applies, direct});
  // Winograd's transforms lose precision that a deep fp32 network accumulates (resnet50's logits moved by
  // 1.2e-3): offered only when the build allows reduced-precision tactics.
  registry.add(KernelRow{.name = "onednn_winograd",
                         .kind = LayerKind::Convolution,
                         .applies = winograd_applies,
                         .create = winograd,
                         .formats = [](const LayerInfo& info) { return preferred_formats(info, true); },
                         .reduced_precision = true,
                         .any_format = true});
  registry.add(KernelRow{.name = "onednn_blocked",
                         .kind = LayerKind::Convolution,
                         .applies = conv_applies,
                         .create = direct,
                         .formats = [](const LayerInfo& info) { return preferred_formats(info, false); },
                         .any_format = true});
}

}  // namespace kiln::engine::cpu::onednn
