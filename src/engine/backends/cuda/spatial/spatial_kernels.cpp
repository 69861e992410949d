// Host side of the spatial kernels (spatial.cu): Pooling (tactics "nhwc": 4-D channels-last tensors, and
// "generic": planar), Attention (tactic "generic"); the launch parameters of
// Attention layers, which the "flash" tactic (flash_attention_kernels.cpp) shares.

#include <cmath>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/reference/attention_layout.h"

namespace kiln::engine::cuda {
namespace {

/// Per-spatial-dim values padded in front to 3 entries (empty: `fill` for every dim), as the reference does.
void to3(std::vector<int64_t> v, size_t ns, int64_t fill, int64_t* out) {
  if (v.empty()) v.assign(ns, fill);
  while (v.size() < 3) v.insert(v.begin(), fill);
  for (int i = 0; i < 3; ++i) out[i] = v[i];
}

class PoolKernel : public Kernel {
 public:
  PoolKernel(const LayerInfo& info, bool channels_last)
      : p_(info.params<PoolingParams>()), nhwc_(channels_last) {}
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    size_t ns = x.dims.size() - 2;
    PoolParams p;
    p.kind = p_.kind == PoolingParams::Max ? 0 : 1;
    p.adaptive = p_.adaptive;
    p.count_include_pad = p_.count_include_pad;
    to3(Dims(x.dims.begin() + 2, x.dims.end()), ns, 1, p.in);
    to3(Dims(y.dims.begin() + 2, y.dims.end()), ns, 1, p.out);
    to3(p_.window, ns, 1, p.win);
    to3(p_.stride, ns, 1, p.stride);
    to3(p_.pre_padding, ns, 0, p.pad);
    to3(p_.dilation, ns, 1, p.dil);
    if (nhwc_) p.channels = x.dims[1];
    launch_pool(x.data, y.data, dcode(x.dtype), nhwc_ ? x.dims[0] : x.dims[0] * x.dims[1], p,
                stream_of(args));
    check_launch("pooling");
  }

 private:
  PoolingParams p_;
  bool nhwc_ = false;  // input and output channels-last
};

class AttentionKernel : public Kernel {
 public:
  explicit AttentionKernel(const LayerInfo& info) : p_(info.params<AttentionParams>()) {}
  void execute(KernelArgs& args) const override {
    const void* mask = nullptr;
    AttnParams a = attention_params(p_, args, &mask);
    KILN_CHECK(a.lk <= kMaxAttnKeys, Unsupported, "cuda attention: ", a.lk, " keys > ", kMaxAttnKeys);
    launch_attention(args.inputs[0].data, args.inputs[1].data, args.inputs[2].data, mask,
                     args.outputs[0].data, dcode(args.inputs[0].dtype), a, stream_of(args));
    check_launch("attention");
  }

 private:
  AttentionParams p_;
};

bool pool_applies(const LayerInfo& layer, std::string* why) {
  size_t r = layer.inputs[0].max.size();
  if (r < 3 || r > 5) {
    if (why) *why = "pooling needs 1 to 3 spatial dims";
    return false;
  }
  return float_dtypes(layer, why);
}

/// The channels-last tactic: 2-D pooling (4-D tensors) of any kind the planar kernel runs.
bool pool_nhwc_applies(const LayerInfo& layer, std::string* why) {
  if (!pool_applies(layer, why)) return false;
  if (layer.inputs[0].max.size() != 4) {
    if (why) *why = "channels-last pooling is for 4-D tensors";
    return false;
  }
  return true;
}

TacticFormats pool_nhwc_formats(const LayerInfo&) {
  return {{TensorFormat::ChannelsLast}, {TensorFormat::ChannelsLast}};
}

std::unique_ptr<Kernel> make_pool(const LayerInfo& layer) {
  return std::make_unique<PoolKernel>(layer, false);
}
std::unique_ptr<Kernel> make_pool_nhwc(const LayerInfo& layer) {
  return std::make_unique<PoolKernel>(layer, true);
}

bool attention_applies(const LayerInfo& layer, std::string* why) {
  if (!ranks_fit(layer, why) || !float_dtypes(layer, why)) return false;
  const auto& p = layer.params<AttentionParams>();
  const Dims& k = p.k_view.empty() ? layer.inputs[1].max : p.k_view.dims;
  if (k[k.size() - 2] > kMaxAttnKeys) {
    if (why) *why = "more than " + std::to_string(kMaxAttnKeys) + " keys";
    return false;
  }
  return true;
}

template <typename K>
std::unique_ptr<Kernel> make(const LayerInfo& layer) {
  return std::make_unique<K>(layer);
}

}  // namespace

AttnParams attention_params(const AttentionParams& layer, const KernelArgs& args, const void** mask) {
  // Logical operands (dense tensors or strided views, attention_layout.h) and their row addressing.
  AttentionOperand ops[4];
  AttnParams a;
  for (int i = 0; i < 4; ++i) {
    ops[i] = attention_operand(layer, i, i < 3 ? args.inputs[i].dims : args.outputs[0].dims);
    AttentionRows r = attention_rows(ops[i]);
    a.rows[i] = AttnRows{r.heads, r.outer, r.inner, r.row, r.offset};
  }
  const Dims &q = ops[0].dims, &k = ops[1].dims, &v = ops[2].dims;
  size_t r = q.size();
  a.lq = q[r - 2];
  a.e = q[r - 1];
  a.lk = k[r - 2];
  a.ev = v[r - 1];
  Dims batch(q.begin(), q.end() - 2);
  a.batch = numel(batch);
  a.batch_shape = to_shape(batch);
  a.scale = static_cast<float>(layer.scale > 0 ? layer.scale : 1.0 / std::sqrt(static_cast<double>(a.e)));
  a.causal = layer.causal;
  *mask = nullptr;
  if (layer.has_mask && args.inputs.size() > 3) {
    const TensorView& m = args.inputs[3];
    *mask = m.data;
    a.mask_kind = m.dtype == DType::Bool ? 1 : 2;
    a.mask_dtype = dcode(m.dtype);
    // Strides of the mask broadcast to [batch..., Lq, Lk].
    Dims full = batch;
    full.push_back(a.lq);
    full.push_back(a.lk);
    auto ms = row_strides(m.dims);
    size_t k0 = full.size() - m.dims.size();
    for (size_t d = 0; d < full.size(); ++d) {
      a.mask_st[d] = d < k0 || m.dims[d - k0] == 1 ? 0 : ms[d - k0];
    }
  }
  return a;
}

void register_spatial(KernelTable& rows) {
  // Channels-last first (as the cudnn_nhwc convolutions): without timing, a CNN's pooling between NHWC
  // convolutions needs no reformat; with timing, a pooling fed by a Plain tensor pays for the reformat the
  // "nhwc" candidate needs and "generic" wins.
  rows.add({.name = "nhwc",
            .kind = LayerKind::Pooling,
            .applies = &pool_nhwc_applies,
            .create = &make_pool_nhwc,
            .formats = &pool_nhwc_formats});
  rows.add({"generic", LayerKind::Pooling, &pool_applies, &make_pool});
  rows.add({"generic", LayerKind::Attention, &attention_applies, &make<AttentionKernel>});
}

}  // namespace kiln::engine::cuda
