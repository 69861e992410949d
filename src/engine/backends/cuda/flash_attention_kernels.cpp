// Host side of the cuda tactic "flash" for Attention layers (flash_attention.cu): fp16 and bf16, head dims up
// to kFlashMaxHeadDim, any sequence lengths, causal, Bool or additive masks broadcast over batch and heads.
// fp32 layers, larger head dims and devices below sm_80 keep the "generic" tactic.

#include <limits>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/flash_attention.h"

namespace kiln::engine::cuda {
namespace {

class FlashAttentionKernel : public Kernel {
 public:
  explicit FlashAttentionKernel(const LayerInfo& info) : p_(info.params<AttentionParams>()) {
    KILN_CUDA_CHECK(static_cast<cudaError_t>(prepare_flash_attention()));
  }
  void execute(KernelArgs& args) const override {
    const void* mask = nullptr;
    AttnParams a = attention_params(p_, args, &mask);
    launch_flash_attention(args.inputs[0].data, args.inputs[1].data, args.inputs[2].data, mask,
                           args.outputs[0].data, dcode(args.inputs[0].dtype), a, stream_of(args));
    check_launch("flash attention");
  }

 private:
  AttentionParams p_;
};

bool flash_attention_applies(const LayerInfo& layer, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (!ranks_fit(layer, why)) return false;
  DType dt = layer.inputs[0].dtype;
  if (dt != DType::Float16 && dt != DType::BFloat16) return fail("flash attention takes f16 and bf16 only");
  const Dims &q = layer.inputs[0].max, &k = layer.inputs[1].max, &v = layer.inputs[2].max;
  size_t r = q.size();
  if (q[r - 1] > kFlashMaxHeadDim || v[r - 1] > kFlashMaxHeadDim) {
    return fail("head dims above " + std::to_string(kFlashMaxHeadDim));
  }
  // 32-bit row and key indices in the kernel, one CTA per kFlashRows query rows of each (batch, head).
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max() - kFlashRows;
  int64_t batch = numel(Dims(q.begin(), q.end() - 2));
  if (q[r - 2] > kLimit || k[r - 2] > kLimit || batch * ((q[r - 2] + kFlashRows - 1) / kFlashRows) > kLimit) {
    return fail("sequences or batch too large for 32-bit indices");
  }
  const char* device_why = nullptr;
  if (!flash_attention_device_ok(&device_why)) return fail(device_why);
  return true;
}

std::unique_ptr<Kernel> make_flash_attention(const LayerInfo& layer) {
  return std::make_unique<FlashAttentionKernel>(layer);
}

}  // namespace

void register_flash_attention(std::vector<CudaKernelFactory>& rows) {
  rows.push_back({"flash", LayerKind::Attention, &flash_attention_applies, &make_flash_attention});
}

}  // namespace kiln::engine::cuda
