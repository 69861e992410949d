// FP8 E4M3 rounding on the host (fp8.h).

#include "engine/ops/fp8.h"

#include <algorithm>
#include <cmath>

namespace kiln::engine::ops {

uint8_t float_to_e4m3(float x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const float a = std::fabs(x);
  if (a >= kE4m3Max) return sign | 0x7e;  // saturate to 448 (E4M3 has no infinity; 480 would be NaN's code)
  // The step of the binade holding `a` (2^(e - 3) for a normal value of exponent e, 2^-9 below 2^-6), then
  // `a` rounded to a multiple of it, ties to even (a / step is exact: the step is a power of two).
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): floor(log2 a) = e - 1
  const int exponent = std::max(e - 1, -6);
  const float step = std::ldexp(1.0f, exponent - 3);
  const float units = std::nearbyint(a / step);  // in [0, 16]; 16 carries into the next binade
  if (units == 0.0f) return sign;
  if (exponent == -6 && units < 8.0f) return sign | static_cast<uint8_t>(units);  // subnormal
  int biased = exponent + 7;
  int mantissa = static_cast<int>(units) - 8;
  if (mantissa == 8) {
    ++biased;
    mantissa = 0;
  }
  return sign | static_cast<uint8_t>(biased << 3) | static_cast<uint8_t>(mantissa);
}

float e4m3_to_float(uint8_t bits) {
  const float sign = (bits & 0x80) ? -1.0f : 1.0f;
  const int biased = (bits >> 3) & 0xf;
  const int mantissa = bits & 0x7;
  if (biased == 0xf && mantissa == 0x7) return std::nanf("");
  if (biased == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(static_cast<float>(8 + mantissa), biased - 7 - 3);
}

Fp8Weights quantize_e4m3(const std::vector<float>& weights) {
  Fp8Weights out;
  float amax = 0.0f;
  for (float w : weights) amax = std::max(amax, std::fabs(w));
  out.scale = std::isnormal(amax / kE4m3Max) ? amax / kE4m3Max : 1.0f;
  const float inverse = 1.0f / out.scale;
  out.values.resize(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) out.values[i] = float_to_e4m3(weights[i] * inverse);
  return out;
}

}  // namespace kiln::engine::ops
