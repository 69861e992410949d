// Host side of the cuda tactics "flash", "flash_wide" and "flash_tall" for Attention layers
// (flash_attention.cu; CTAs of 4 warps of 16 query rows, 8 of 16 and 4 of 32, timed against each other by the
// builder): fp16 and bf16, head dims up to kFlashMaxHeadDim, any
// sequence lengths, causal, Bool or additive masks broadcast over batch and heads. fp32 layers, larger head
// dims and devices below sm_80 keep the "generic" tactic. The output may be written as E4M3
// (KernelRow::writes): the input of the FP8 attention-out projection, quantized in the kernel's epilogue from
// the values it would store, with the output's dynamic range.

#include <algorithm>
#include <limits>

#include "engine/backends/cuda/attention/attention_kernels.h"
#include "engine/backends/cuda/attention/flash_attention.h"
#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/matmul_fp8.h"

namespace kiln::engine::cuda {
namespace {

/// The head dim the kernel is made for: the larger of q's E and v's Ev (logical dims: a view's, else the
/// input's).
int64_t flash_head_dim(const LayerInfo& layer) {
  const auto& p = layer.params<AttentionParams>();
  const Dims& q = p.q_view.empty() ? layer.inputs[0].max : p.q_view.dims;
  const Dims& v = p.v_view.empty() ? layer.inputs[2].max : p.v_view.dims;
  return std::max(q.back(), v.back());
}

class FlashAttentionKernel : public Kernel {
 public:
  FlashAttentionKernel(const LayerInfo& info, FlashShape shape)
      : p_(info.params<AttentionParams>()), shape_(shape) {
    KILN_CUDA_CHECK(static_cast<cudaError_t>(prepare_flash_attention(shape, flash_head_dim(info))));
    // (create_kernel took an E4M3 output only where flash_writes_e4m3 accepts it)
    if (info.outputs[0].format == TensorFormat::E4M3)
      e4m3_inverse_scale_ = 1.0f / usable_fp8_scale(info.outputs[0].range);
  }
  void execute(KernelArgs& args) const override {
    const void* mask = nullptr;
    AttnParams a = attention_params(p_, args, &mask);
    E4m3Out out8;
    if (e4m3_inverse_scale_ > 0) out8 = {static_cast<uint8_t*>(args.outputs[0].data), e4m3_inverse_scale_};
    launch_flash_attention(args.inputs[0].data, args.inputs[1].data, args.inputs[2].data, mask,
                           args.outputs[0].data, dcode(args.inputs[0].dtype), a, stream_of(args), out8,
                           shape_);
    check_launch("flash attention");
  }

 private:
  AttentionParams p_;
  FlashShape shape_;
  float e4m3_inverse_scale_ = 0;
};

/// KernelRow::writes of the flash row: its output as E4M3 with no workspace, where the output has a usable
/// range.
std::optional<size_t> flash_writes_e4m3(const LayerInfo& layer, TensorFormat format) {
  if (format != TensorFormat::E4M3 || usable_fp8_scale(layer.outputs[0].range) <= 0) return std::nullopt;
  return size_t{0};
}

/// Whether the kernel of shape `shape` takes `layer`.
bool flash_applies_with(const LayerInfo& layer, FlashShape shape, std::string* why) {
  if (!ranks_fit(layer, why)) return false;
  DType dt = layer.inputs[0].dtype;
  if (dt != DType::Float16 && dt != DType::BFloat16) {
    return refuse(why, "flash attention takes f16 and bf16 only");
  }
  const auto& p = layer.params<AttentionParams>();
  // Logical dims (views: the viewed operand's); a view's rows must stay 16-byte aligned (cp.async / uint4
  // rows: offset and b/h/s strides multiples of 8 elements, head dim too), else the generic tactic runs it.
  const Dims& q = p.q_view.empty() ? layer.inputs[0].max : p.q_view.dims;
  const Dims& k = p.k_view.empty() ? layer.inputs[1].max : p.k_view.dims;
  const Dims& v = p.v_view.empty() ? layer.inputs[2].max : p.v_view.dims;
  for (int i = 0; i < 4; ++i) {
    const AttentionView& view = p.view(i);
    if (view.empty()) continue;
    bool aligned = view.offset % 8 == 0 && view.dims[3] % 8 == 0;
    for (int d = 0; d < 3; ++d) aligned = aligned && view.strides[d] % 8 == 0;
    if (!aligned) return refuse(why, "a strided view whose rows are not 16-byte aligned");
  }
  size_t r = q.size();
  if (q[r - 1] > kFlashMaxHeadDim || v[r - 1] > kFlashMaxHeadDim) {
    return refuse(why, "head dims above " + std::to_string(kFlashMaxHeadDim));
  }
  // 32-bit row and key indices in the kernel (up to the largest CTA's rows past the end), one CTA per
  // kFlashRows (or more) query rows of each (batch, head).
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max() - kFlashMaxRows;
  int64_t batch = numel(Dims(q.begin(), q.end() - 2));
  if (q[r - 2] > kLimit || k[r - 2] > kLimit || batch * ((q[r - 2] + kFlashRows - 1) / kFlashRows) > kLimit) {
    return refuse(why, "sequences or batch too large for 32-bit indices");
  }
  const char* device_why = nullptr;
  if (!flash_attention_device_ok(&device_why)) return refuse(why, device_why);
  if (!flash_attention_fits_device(shape, flash_head_dim(layer), &device_why)) return refuse(why, device_why);
  return true;
}
template <FlashShape kShape>
bool flash_applies(const LayerInfo& layer, std::string* why) {
  return flash_applies_with(layer, kShape, why);
}
template <FlashShape kShape>
std::unique_ptr<Kernel> make_flash(const LayerInfo& layer) {
  return std::make_unique<FlashAttentionKernel>(layer, kShape);
}

}  // namespace

void register_flash_attention(KernelTable& rows) {
  rows.add({.name = "flash",
            .kind = LayerKind::Attention,
            .applies = &flash_applies<FlashShape::k4Warps>,
            .create = &make_flash<FlashShape::k4Warps>,
            .writes = &flash_writes_e4m3});
  rows.add({.name = "flash_wide",
            .kind = LayerKind::Attention,
            .applies = &flash_applies<FlashShape::k8Warps>,
            .create = &make_flash<FlashShape::k8Warps>,
            .writes = &flash_writes_e4m3});
  rows.add({.name = "flash_tall",
            .kind = LayerKind::Attention,
            .applies = &flash_applies<FlashShape::k4WarpsTall>,
            .create = &make_flash<FlashShape::k4WarpsTall>,
            .writes = &flash_writes_e4m3});
}

}  // namespace kiln::engine::cuda
