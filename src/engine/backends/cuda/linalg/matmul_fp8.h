#pragma once
// What the FP8 matmul tactic ("cublaslt_fp8", Tactic::fp8; matmul.cpp) needs beyond the other cuBLASLt
// tactics: which layers it takes, and its weights.
//
// cuBLASLt's FP8 GEMMs (compute capability 8.9 and up) take E4M3 operands in its "TN" form only: the weight,
// cuBLASLt's A, is stored [N, K] (K contiguous) and transposed in the call; the activations, its B, [M, K]
// (K contiguous) and not transposed; K and N multiples of 16. Each operand has one fp32 scale
// (A_SCALE_POINTER / B_SCALE_POINTER, in device memory): D = scale_w * scale_a * (W_q A_q) + bias,
// accumulated in fp32 and written in the layer's fp16 or bf16 (epilogues and C as for the other tactics). The
// weight is quantized once per tensor (ops::quantize_e4m3: max |w| / 448); the activations per tensor with
// the input's dynamic range (amax / 448): the tactic reads A in TensorFormat::E4M3, written by the layer
// before or by a quantizing Reformat (fp8_quantize.h).

#include <optional>
#include <string>

#include "engine/backends/cuda/cuda_util.h"
#include "kiln/engine/backend.h"

namespace kiln::engine::cuda {

/// Whether the FP8 tactic runs `layer`: a linear layer (constant 2-D weight, A not transposed) with fp16 or
/// bf16 output, a usable dynamic range on A, K and N multiples of 16, on a device that has FP8 tensor cores.
/// (The operand and post-op rules of the other cuBLASLt tactics apply too.)
bool fp8_matmul_fits(const LayerInfo& layer, std::string* why);

/// A weight quantized for the FP8 tactic: E4M3 values laid out [N, K] and the weight's scale.
struct Fp8Weight {
  DeviceBuffer values;
  float scale = 1.0f;
  int64_t n = 0, k = 0;
};
/// Quantizes the constant b of a matmul ([K, N], or [N, K] when `transpose_b`) and uploads it as [N, K].
Fp8Weight upload_fp8_weight(const HostTensor& b, bool transpose_b);

/// The activation scale of the FP8 tactic for an input with dynamic range `range`: amax / 448.
float fp8_activation_scale(const DynamicRange& range);

/// fp8_activation_scale of a tensor's dynamic range, or 0 where it gives none usable (no range, an unusable one,
/// a scale that is not a normal float): what every kernel that reads or writes E4M3 checks first.
float usable_fp8_scale(const std::optional<DynamicRange>& range);

}  // namespace kiln::engine::cuda
