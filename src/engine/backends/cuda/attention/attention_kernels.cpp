// The generic attention tactic (attention.cu) and the launch parameters both attention tactics share.

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/backends/cuda/attention/attention_kernels.h"
#include "engine/backends/cuda/attention/attention_launch.h"
#include "engine/backends/cuda/cuda_util.h"
#include "engine/ops/attention_layout.h"

namespace kiln::engine::cuda {
namespace {

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

bool attention_applies(const LayerInfo& layer, std::string* why) {
  if (!ranks_fit(layer, why) || !float_dtypes(layer, why)) return false;
  const auto& p = layer.params<AttentionParams>();
  const Dims& k = p.k_view.empty() ? layer.inputs[1].max : p.k_view.dims;
  if (k[k.size() - 2] > kMaxAttnKeys) {
    return refuse(why, "more than " + std::to_string(kMaxAttnKeys) + " keys");
  }
  return true;
}

std::unique_ptr<Kernel> make_attention(const LayerInfo& layer) {
  return std::make_unique<AttentionKernel>(layer);
}

}  // namespace

AttnParams attention_params(const AttentionParams& layer, const KernelArgs& args, const void** mask) {
  // Logical operands (dense tensors or strided views, attention_layout.h) and their row addressing.
  AttentionOperand ops[4];
  AttnParams a;
  for (int i = 0; i < 4; ++i) {
    ops[i] = attention_operand(layer, i, i < 3 ? args.inputs[i].dims : args.outputs[0].dims);
    AttentionRows r = attention_rows(ops[i]);
    a.rows[i] = AttnRows{r.heads, r.group, r.outer, r.inner, r.row, r.offset};
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
  // Positive as a float too (a positive double below float's range would round to 0; the flash kernel scales
  // scores inside the exponent and relies on scale > 0): such a scale makes every score 0 either way.
  a.scale =
      std::max(static_cast<float>(layer.scale > 0 ? layer.scale : 1.0 / std::sqrt(static_cast<double>(a.e))),
               std::numeric_limits<float>::min());
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

void register_attention(KernelTable& rows) {
  rows.add({"generic", LayerKind::Attention, &attention_applies, &make_attention});
}

}  // namespace kiln::engine::cuda
