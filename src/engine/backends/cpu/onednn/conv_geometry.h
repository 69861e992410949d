#pragma once
// The geometry of a Kiln convolution layer as oneDNN wants it (strides, paddings, dilations, the weights'
// logical dims over Kiln's dense layout): shared by the fp32 ("onednn*") and the INT8 ("onednn_int8")
// convolution kernels.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/backends/cpu/onednn/onednn_common.h"
#include "engine/ops/shape_inference.h"

namespace kiln::engine::cpu::onednn {

using dnnl::memory;
using Tag = memory::format_tag;

/// The convolution's geometry as oneDNN wants it (no weight values): enough to make primitive descriptors.
/// A convolution's multiply-accumulates per output element (per input element when transposed): its weight
/// count over the weights' first dim.
inline double macs_per_element(const Layer& layer) {
  const HostTensor& w = layer.weights[0].value;
  return w.dim() > 0 && w.sizes()[0] > 0 ? static_cast<double>(w.numel()) / static_cast<double>(w.sizes()[0])
                                         : 0.0;
}

/// A convolution's primitive for one shape: the primitive, its source and destination descriptors, the
/// weights in the layout it wants (the kernel's prepared copy when that is the layout, else
/// `reorder(layout)`), its own (user-mode) scratchpad and oneDNN's implementation name (for errors). Shared
/// by the fp32 and INT8 kernels.
struct ConvPrimitive {
  dnnl::primitive conv;
  memory::desc src_md, dst_md;
  std::shared_ptr<memory> weights;
  memory scratchpad;
  std::string impl;

  template <typename Reorder>
  ConvPrimitive(const dnnl::primitive_desc& pd, const memory::desc& prepared_md,
                const std::shared_ptr<memory>& prepared, Reorder&& reorder)
      : conv(pd),
        src_md(pd.src_desc()),
        dst_md(pd.dst_desc()),
        scratchpad(pd.scratchpad_desc(), cpu_engine()),
        impl(pd.impl_info_str()) {
    const memory::desc wmd = pd.weights_desc();
    weights = wmd == prepared_md ? prepared : reorder(wmd);
  }
};

struct ConvGeometry {
  ConvolutionParams p;
  int64_t ns = 0;
  std::vector<int64_t> stride, pad_l, pad_r, dilate;
  int64_t residual_input = -1;
  memory::desc weights_user_md, bias_md;
  memory::dims weights_user_strides;  // of weights_user_md (the INT8 kernel's s8 copy has the same layout)
  dnnl::primitive_attr attr;

  dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct;
  DT weights_dt = DT::f32;  // the prepared weights' type (s8 for the INT8 tactic)

  ConvGeometry(const Layer& layer, bool winograd) {
    if (winograd) algorithm = dnnl::algorithm::convolution_winograd;
    p = layer.get<ConvolutionParams>();
    const HostTensor& w = layer.weights[0].value;
    ns = w.dim() - 2;
    auto fill = [&](std::vector<int64_t> v, int64_t value) {
      if (v.empty()) v.assign(static_cast<size_t>(ns), value);
      return v;
    };
    stride = fill(p.stride, 1);
    pad_l = fill(p.pre_padding, 0);
    pad_r = fill(p.post_padding, 0);
    auto dil = fill(p.dilation, 1);
    dilate.resize(static_cast<size_t>(ns));
    for (int64_t i = 0; i < ns; ++i) dilate[i] = dil[i] - 1;  // oneDNN counts the gaps
    if (p.transposed) {
      // oneDNN derives the output size from dst dims; output_padding goes to the right padding.
      auto op = fill(p.output_padding, 0);
      for (int64_t i = 0; i < ns; ++i) pad_r[i] -= op[i];
    }
    residual_input = count_sum_post_ops(p.post_ops) > 0 ? first_residual_input(layer) : -1;

    // Weights: logical oneDNN dims with strides over Kiln's dense layout.
    const auto& ws = w.sizes();
    int64_t g = p.groups, ksp = 1;
    memory::dims kdims(ws.begin() + 2, ws.end());
    for (int64_t k : kdims) ksp *= k;
    memory::dims wd, wst;
    memory::dims kstr = dense_strides(kdims);
    if (!p.transposed) {
      int64_t o = ws[0], ig = ws[1];
      if (g == 1) {
        wd = {o, ig};
        wst = {ig * ksp, ksp};
      } else {
        wd = {g, o / g, ig};
        wst = {o / g * ig * ksp, ig * ksp, ksp};
      }
    } else {
      int64_t i = ws[0], og = ws[1];  // memory [I, O/g, k...] = [g, I/g, O/g, k...]
      if (g == 1) {
        wd = {og, i};
        wst = {ksp, og * ksp};
      } else {
        wd = {g, og, i / g};
        wst = {i / g * og * ksp, ksp, og * ksp};
      }
    }
    wd.insert(wd.end(), kdims.begin(), kdims.end());
    wst.insert(wst.end(), kstr.begin(), kstr.end());
    weights_user_md = memory::desc(wd, DT::f32, wst);
    weights_user_strides = wst;
    int64_t out_channels = p.transposed ? ws[1] * g : ws[0];
    if (layer.weights.size() > 1 && layer.weights[1].defined())
      bias_md = memory::desc({out_channels}, DT::f32, Tag::a);
    attr = make_attr(p.post_ops);
  }

  /// The primitive descriptor for activations `src` and `dst` (weights in any layout), with the post-ops of
  /// `attr_override` in place of the layer's when set.
  dnnl::primitive_desc make_pd(const memory::desc& src, const memory::desc& dst,
                               const dnnl::primitive_attr* attr_override = nullptr) const {
    const dnnl::primitive_attr& a = attr_override ? *attr_override : attr;
    memory::desc wts(weights_user_md.dims(), weights_dt, Tag::any);
    memory::dims st(stride.begin(), stride.end()), dl(dilate.begin(), dilate.end());
    memory::dims pl(pad_l.begin(), pad_l.end()), pr(pad_r.begin(), pad_r.end());
    if (!p.transposed) {
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, algorithm, src, wts, bias_md, dst,
                                        st, dl, pl, pr);
      dnnl::convolution_forward::primitive_desc pd(d, a, cpu_engine());
      skip_implementations_that_cannot_run(pd);
      return pd;
    }
    dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::deconvolution_direct, src, wts, bias_md, dst, st, dl,
                                        pl, pr);
    dnnl::deconvolution_forward::primitive_desc pd(d, a, cpu_engine());
    skip_implementations_that_cannot_run(pd);
    return pd;
  }
};

}  // namespace kiln::engine::cpu::onednn
