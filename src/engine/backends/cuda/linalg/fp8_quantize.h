#pragma once
// The quantization of activations to FP8 E4M3 (fp8_quantize.cu; TensorFormat::E4M3, what an FP8 cuBLASLt call
// reads), run by the quantizing Reformat and by post-op passes that found no epilogue:
// out[i] = e4m3(x[i] * inverse_scale), rounded to nearest even and saturated to +-448 (__NV_SATFINITE, as
// ops::float_to_e4m3 does on the host). Also to INT8, what the INT8 convolution ("cudnn_int8") reads where its
// input is floating: out[i] = int8(x[i] * inverse_scale) rounded to nearest even, saturated to [-128, 127],
// NaN to 0. Plain C++ header shared by the .cu file (nvcc) and the host side.

#include <cstdint>

#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

/// Enqueues the quantization of `n` elements of `x` (dtype code kF32, kF16 or kBF16) into `out` (n bytes).
void launch_quantize_e4m3(const void* x, int dtype, int64_t n, float inverse_scale, uint8_t* out,
                          Stream stream);
/// The same into signed INT8 codes (`out`: n bytes).
void launch_quantize_s8(const void* x, int dtype, int64_t n, float inverse_scale, int8_t* out, Stream stream);

}  // namespace kiln::engine::cuda
