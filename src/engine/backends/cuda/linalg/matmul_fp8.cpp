// The FP8 matmul tactic's layer rule and weights (matmul_fp8.h).

#include "engine/backends/cuda/linalg/matmul_fp8.h"

#include <cuda_runtime.h>

#include <cmath>

#include "engine/ops/fp8.h"
#include "kiln/support/host_math.h"

namespace kiln::engine::cuda {
bool fp8_matmul_fits(const LayerInfo& layer, std::string* why) {
  const Layer& l = *layer.layer;
  const auto& p = l.get<MatrixMultiplyParams>();
  const DType dt = layer.outputs[0].dtype;
  if (dt != DType::Float16 && dt != DType::BFloat16) {
    return refuse(why, std::string("a ") + dtype_name(dt) + " output (the FP8 tactic writes fp16 or bf16)");
  }
  if (l.weights.empty() || !l.weights[0].defined() || l.weights[0].value.dim() != 2) {
    return refuse(why, "B is not a constant matrix");
  }
  if (p.transpose_a) return refuse(why, "A transposed");
  const TensorInfo& a = layer.inputs[0];
  if (usable_fp8_scale(a.range) == 0) {
    return refuse(why, "no usable dynamic range on A");
  }
  const Dims& b = l.weights[0].value.sizes();
  const int64_t k = b[p.transpose_b ? 1 : 0], n = b[p.transpose_b ? 0 : 1];
  if (k % 16 != 0 || n % 16 != 0) {
    return refuse(why, "K = " + std::to_string(k) + ", N = " + std::to_string(n) +
                           " (cuBLASLt's FP8 GEMMs take multiples of 16)");
  }
  if (current_compute_capability() < 89) {
    return refuse(why, "the device has no FP8 tensor cores (compute capability below 8.9)");
  }
  return true;
}

Fp8Weight upload_fp8_weight(const HostTensor& b, bool transpose_b) {
  Fp8Weight w;
  const Dims& d = b.sizes();
  w.k = d[transpose_b ? 1 : 0];
  w.n = d[transpose_b ? 0 : 1];
  std::vector<float> nk(static_cast<size_t>(w.n * w.k));
  for (int64_t r = 0; r < d[0]; ++r) {
    for (int64_t c = 0; c < d[1]; ++c) {
      const float v = static_cast<float>(load_element(b.data(), b.dtype(), r * d[1] + c));
      nk[static_cast<size_t>(transpose_b ? r * w.k + c : c * w.k + r)] = v;
    }
  }
  const ops::Fp8Weights q = ops::quantize_e4m3(nk);
  w.scale = q.scale;
  w.values = DeviceBuffer(q.values.data(), q.values.size());
  return w;
}

float fp8_activation_scale(const DynamicRange& range) { return range.amax() / ops::kE4m3Max; }

float usable_fp8_scale(const std::optional<DynamicRange>& range) {
  if (!range || !range->usable()) return 0;
  const float scale = fp8_activation_scale(*range);
  return std::isnormal(scale) ? scale : 0;
}

}  // namespace kiln::engine::cuda
