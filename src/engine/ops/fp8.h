#pragma once
// FP8 E4M3 (the "fn" variant: 1 sign, 4 exponent bits with bias 7, 3 mantissa bits, no infinities, NaN =
// S.1111.111; largest finite 448, smallest subnormal 2^-9) on the host: the rounding every backend's FP8
// tactics reproduce, and per-tensor quantization of weights. Activations take one scale per tensor from their
// dynamic range: amax / kE4m3Max.

#include <cstdint>
#include <vector>

namespace kiln::engine::ops {

/// The largest finite E4M3 value.
inline constexpr float kE4m3Max = 448.0f;

/// `x` rounded to the nearest E4M3 value (ties to even), saturated to +-448 (CUDA's __NV_SATFINITE); NaN
/// gives the NaN code 0x7f.
uint8_t float_to_e4m3(float x);
/// The value of E4M3 code `bits` (NaN for 0x7f and 0xff).
float e4m3_to_float(uint8_t bits);

/// Weights quantized to E4M3 with one scale per tensor: value ~= e4m3_to_float(values[i]) * scale.
struct Fp8Weights {
  std::vector<uint8_t> values;  // same layout as the fp32 weights
  float scale = 1.0f;           // max |w| / 448 (1 for all-zero or non-finite weights)
};

/// Quantizes `weights`: scale = max |w| / kE4m3Max, values = float_to_e4m3(w * (1 / scale)).
Fp8Weights quantize_e4m3(const std::vector<float>& weights);

}  // namespace kiln::engine::ops
