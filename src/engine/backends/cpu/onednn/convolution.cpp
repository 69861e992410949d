// oneDNN convolution and deconvolution (1-3 spatial dims, groups, dilation, asymmetric padding) with fused
// bias, eltwise post-ops and a residual sum.
//
// Two tactics:
//   "onednn"         the primitive reads and writes the plain NC... activations directly;
//   "onednn_blocked" the primitive picks its preferred (blocked) activation layouts and the kernel reorders
//                    the input, residual and output at its boundaries.
// Both prepare the weights once, in the layout the primitive prefers at the profile's opt shape. Primitives
// are cached per input shape in the per-context state.

#include <cstring>
#include <map>
#include <memory>

#include "engine/backends/cpu/onednn/onednn_common.h"
#include "engine/backends/cpu/onednn/register.h"
#include "engine/core/shape_inference.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

/// Everything needed to run the primitive for one input shape.
struct ConvEntry {
  dnnl::primitive conv;
  memory::desc src_plain, dst_plain;
  memory::desc src_md, dst_md;    // as the primitive wants them
  std::shared_ptr<memory> weights;  // prepared weights in the layout this primitive wants
  std::unique_ptr<memory> src_buf, dst_buf;  // blocked buffers (blocked tactic only)
  std::unique_ptr<dnnl::reorder> src_in, dst_out, residual_in;
  memory scratchpad;  // this entry's own (user-mode) scratchpad
};

struct ConvState : KernelState {
  std::map<Dims, std::unique_ptr<ConvEntry>> entries;
  dnnl::stream stream{cpu_engine()};
};

class ConvolutionKernel : public Kernel {
 public:
  ConvolutionKernel(const LayerInfo& info, bool blocked) : blocked_(blocked) {
    const Layer& layer = *info.layer;
    p_ = layer.get<ConvolutionParams>();
    const HostTensor& w = layer.weights[0].value;
    ns_ = w.dim() - 2;
    auto fill = [&](std::vector<int64_t> v, int64_t value) {
      if (v.empty()) v.assign(static_cast<size_t>(ns_), value);
      return v;
    };
    stride_ = fill(p_.stride, 1);
    pad_l_ = fill(p_.pre_padding, 0);
    pad_r_ = fill(p_.post_padding, 0);
    auto dil = fill(p_.dilation, 1);
    dilate_.resize(static_cast<size_t>(ns_));
    for (int64_t i = 0; i < ns_; ++i) dilate_[i] = dil[i] - 1;  // oneDNN counts the gaps
    if (p_.transposed) {
      // oneDNN derives the output size from dst dims; output_padding goes to the right padding.
      auto op = fill(p_.output_padding, 0);
      for (int64_t i = 0; i < ns_; ++i) pad_r_[i] -= op[i];
    }
    sum_scale_present_ = count_sum_post_ops(p_.post_ops) > 0;
    residual_input_ = sum_scale_present_ ? first_residual_input(layer) : -1;

    // Weights: logical oneDNN dims with strides over Kiln's dense layout.
    const auto& ws = w.sizes();
    int64_t g = p_.groups, ksp = 1;
    memory::dims kdims(ws.begin() + 2, ws.end());
    for (int64_t k : kdims) ksp *= k;
    memory::dims wd, wst;
    memory::dims kstr = dense_strides(kdims);
    if (!p_.transposed) {
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
    weights_user_md_ = memory::desc(wd, DT::f32, wst);
    weight_values_ = weights_as_floats(w);
    out_channels_ = p_.transposed ? ws[1] * g : ws[0];
    if (layer.weights.size() > 1 && layer.weights[1].defined()) {
      bias_values_ = weights_as_floats(layer.weights[1].value);
      bias_md_ = memory::desc({out_channels_}, DT::f32, Tag::a);
    }
    attr_ = make_attr(p_.post_ops);

    // Prepare the weights for the opt shape's primitive.
    Dims x_opt = info.inputs[0].opt, y_opt = info.outputs[0].opt;
    auto pd = make_pd(x_opt, y_opt);
    prepared_md_ = pd.weights_desc();
    prepared_ = reorder_weights(prepared_md_);
  }

  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<ConvState>(); }

  void execute(KernelArgs& args) const override {
    auto* state = static_cast<ConvState*>(args.state);
    KILN_CHECK(state != nullptr, Internal, "oneDNN convolution executed without its state");
    const TensorView& x = args.inputs[0];
    const TensorView& y = args.outputs[0];
    auto& slot = state->entries[x.dims];
    if (!slot) slot = make_entry(x.dims, y.dims);
    ConvEntry& e = *slot;
    use_pool_threads(args.pool);
    dnnl::stream& s = state->stream;

    memory src(e.src_plain, cpu_engine(), x.data);
    memory dst(e.dst_plain, cpu_engine(), y.data);
    memory* src_use = &src;
    memory* dst_use = &dst;
    if (e.src_in) {
      e.src_in->execute(s, src, *e.src_buf);
      src_use = e.src_buf.get();
    }
    if (e.dst_buf) dst_use = e.dst_buf.get();
    if (residual_input_ >= 0) {
      const TensorView& r = args.inputs[residual_input_];
      if (e.residual_in) {
        memory res(e.dst_plain, cpu_engine(), r.data);
        e.residual_in->execute(s, res, *e.dst_buf);
      } else if (r.data != y.data) {
        std::memcpy(y.data, r.data, y.nbytes());
      }
    }
    std::unordered_map<int, memory> margs{
        {DNNL_ARG_SRC, *src_use}, {DNNL_ARG_WEIGHTS, *e.weights}, {DNNL_ARG_DST, *dst_use},
        {DNNL_ARG_SCRATCHPAD, e.scratchpad}};
    if (!bias_values_.empty()) {
      margs.emplace(DNNL_ARG_BIAS, memory(bias_md_, cpu_engine(), const_cast<float*>(bias_values_.data())));
    }
    e.conv.execute(s, margs);
    if (e.dst_out) e.dst_out->execute(s, *e.dst_buf, dst);
    s.wait();
  }

 private:
  memory::desc act_md(const Dims& dims, bool any) const {
    memory::dims d = to_dnnl_dims(dims);
    if (any) return memory::desc(d, DT::f32, Tag::any);
    return memory::desc(d, DT::f32, dense_strides(d));
  }

  /// The primitive descriptor for one shape (weights in any layout; activations per tactic).
  dnnl::primitive_desc make_pd(const Dims& x, const Dims& y) const {
    memory::desc src = act_md(x, blocked_), dst = act_md(y, blocked_);
    memory::desc wts(weights_user_md_.dims(), DT::f32, Tag::any);
    memory::desc bias = bias_values_.empty() ? memory::desc() : bias_md_;
    memory::dims st(stride_.begin(), stride_.end()), dl(dilate_.begin(), dilate_.end());
    memory::dims pl(pad_l_.begin(), pad_l_.end()), pr(pad_r_.begin(), pad_r_.end());
    if (!p_.transposed) {
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                        src, wts, bias, dst, st, dl, pl, pr);
      return dnnl::convolution_forward::primitive_desc(d, attr_, cpu_engine());
    }
    dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                        src, wts, bias, dst, st, dl, pl, pr);
    return dnnl::deconvolution_forward::primitive_desc(d, attr_, cpu_engine());
  }

  std::shared_ptr<memory> reorder_weights(const memory::desc& md) const {
    auto out = std::make_shared<memory>(md, cpu_engine());
    memory user(weights_user_md_, cpu_engine(), const_cast<float*>(weight_values_.data()));
    dnnl::stream s(cpu_engine());
    dnnl::reorder(user, *out).execute(s, user, *out);
    s.wait();
    return out;
  }

  std::unique_ptr<ConvEntry> make_entry(const Dims& x, const Dims& y) const {
    auto e = std::make_unique<ConvEntry>();
    dnnl::primitive_desc pd = make_pd(x, y);
    e->src_plain = act_md(x, false);
    e->dst_plain = act_md(y, false);
    e->src_md = pd.src_desc();
    e->dst_md = pd.dst_desc();
    memory::desc wmd = pd.weights_desc();
    e->weights = wmd == prepared_md_ ? prepared_ : reorder_weights(wmd);
    if (e->src_md != e->src_plain) {
      e->src_buf = std::make_unique<memory>(e->src_md, cpu_engine());
      e->src_in = std::make_unique<dnnl::reorder>(memory(e->src_plain, cpu_engine(), nullptr), *e->src_buf);
    }
    if (e->dst_md != e->dst_plain) {
      e->dst_buf = std::make_unique<memory>(e->dst_md, cpu_engine());
      e->dst_out = std::make_unique<dnnl::reorder>(*e->dst_buf, memory(e->dst_plain, cpu_engine(), nullptr));
      if (residual_input_ >= 0) {
        e->residual_in = std::make_unique<dnnl::reorder>(memory(e->dst_plain, cpu_engine(), nullptr), *e->dst_buf);
      }
    }
    e->scratchpad = memory(pd.scratchpad_desc(), cpu_engine());
    e->conv = dnnl::primitive(pd);
    return e;
  }

  bool blocked_;
  ConvolutionParams p_;
  int64_t ns_ = 0;
  std::vector<int64_t> stride_, pad_l_, pad_r_, dilate_;
  bool sum_scale_present_ = false;
  int64_t residual_input_ = -1;
  int64_t out_channels_ = 0;
  memory::desc weights_user_md_, bias_md_, prepared_md_;
  std::vector<float> weight_values_, bias_values_;
  std::shared_ptr<memory> prepared_;
  dnnl::primitive_attr attr_;
};

bool same_dims(const TensorInfo& a, const TensorInfo& b) {
  return a.min == b.min && a.opt == b.opt && a.max == b.max;
}

bool conv_applies(const LayerInfo& info) {
  const Layer& layer = *info.layer;
  const auto& p = layer.get<ConvolutionParams>();
  if (layer.weights.empty() || !layer.weights[0].defined() || !is_floating(layer.weights[0].value.dtype())) {
    return false;
  }
  int64_t ns = layer.weights[0].value.dim() - 2;
  if (ns < 1 || ns > 3) return false;
  if (!onednn_dtype_ok(info.inputs[0].dtype) || !onednn_dtype_ok(info.outputs[0].dtype)) return false;
  if (!post_ops_supported(p.post_ops)) return false;
  if (count_sum_post_ops(p.post_ops) > 0) {
    const TensorInfo& r = info.inputs[static_cast<size_t>(first_residual_input(layer))];
    if (r.dtype != info.outputs[0].dtype || !same_dims(r, info.outputs[0])) return false;
  }
  if (p.transposed) {
    // oneDNN takes the output padding as negative right padding; keep it within the padding.
    for (size_t i = 0; i < p.output_padding.size(); ++i) {
      int64_t post = i < p.post_padding.size() ? p.post_padding[i] : 0;
      if (p.output_padding[i] > post) return false;
    }
  }
  return true;
}

}  // namespace

void register_onednn_convolution(CpuKernelRegistry& registry) {
  registry.add(CpuKernelFactory{"onednn", LayerKind::Convolution, conv_applies, [](const LayerInfo& info) {
                                  return std::unique_ptr<Kernel>(std::make_unique<ConvolutionKernel>(info, false));
                                }});
  registry.add(CpuKernelFactory{"onednn_blocked", LayerKind::Convolution, conv_applies, [](const LayerInfo& info) {
                                  return std::unique_ptr<Kernel>(std::make_unique<ConvolutionKernel>(info, true));
                                }});
}

}  // namespace kiln::engine::cpu::onednn
