#pragma once
// Branch-free float math that GCC vectorizes inside simple loops (std::exp/erf/tanh calls do not
// vectorize without -ffast-math). Accuracy: a few ulp over the ranges activations use, well inside the
// 1e-4 relative tolerance of the kernel tests.

#include <cmath>
#include <cstdint>
#include <cstring>

/// Compiles a hot loop function for AVX-512, AVX2 and baseline x86-64, picked at load time (the build
/// targets baseline x86-64, so without this the loops would only use SSE2).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KILN_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KILN_SIMD_CLONES
#endif

namespace kiln::engine::cpu::vec {

/// Lanes of the partial sums in the hand-split reductions below (one AVX-512 register of floats).
inline constexpr int kLanes = 16;

/// exp(x) for float: 2^n * p(r) with r = x - n*ln2 in [-ln2/2, ln2/2] and a degree-6 polynomial (relative
/// error below 3e-7); 0 below -87.34 (where exp's result becomes subnormal), +inf above 88.7228 (FLT_MAX's
/// log). NaN propagates.
inline float exp(float x) {
  const float lo = -87.33654f, hi = 88.72283f;
  float xc = x < lo ? lo : (x > hi ? hi : x);
  // Round to nearest by adding and subtracting 1.5 * 2^23 (vectorizes on every ISA, unlike nearbyint).
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693145751953125f;  // ln2 split in two parts for accuracy
  r = r - n * 1.428606765330187045e-06f;
  float p = 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n for n up to 128: float's largest exponent is 127, and x in [88.38, 88.72] rounds to n = 128 with
  // exp(x) still finite (up to FLT_MAX), so 2^128 is taken as 2^127 * 2.
  float n_low = n < 127.0f ? n : 127.0f;
  int32_t bits = (static_cast<int32_t>(n_low) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  float out = p * scale * (1.0f + (n - n_low));
  out = x < lo ? 0.0f : out;
  out = x > hi ? INFINITY : out;
  return x != x ? x : out;
}

/// 1 / (1 + exp(-x)).
inline float sigmoid(float x) { return 1.0f / (1.0f + vec::exp(-x)); }

/// tanh(x) = 1 - 2 / (exp(2x) + 1), with the small-|x| range done by its odd polynomial for accuracy.
inline float tanh(float x) {
  float big = 1.0f - 2.0f / (vec::exp(2.0f * x) + 1.0f);
  float x2 = x * x;
  float small = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315 + x2 * (62.0f / 2835)))));
  return std::fabs(x) < 0.125f ? small : big;
}

/// erf(x): Abramowitz & Stegun 7.1.26 is too coarse (1.5e-7 absolute but 1e-3 relative near 0), so this
/// uses erf(x) = 1 - t*exp(-x^2 + P(t)) (Numerical Recipes' erfc Chebyshev fit, relative error < 1.2e-7)
/// for |x| >= 0.5 and the Maclaurin series below.
inline float erf(float x) {
  float z = std::fabs(x);
  float t = 1.0f / (1.0f + 0.5f * z);
  float poly =
      -1.26551223f +
      t * (1.00002368f +
           t * (0.37409196f +
                t * (0.09678418f +
                     t * (-0.18628806f +
                          t * (0.27886807f +
                               t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
  float erfc = t * vec::exp(-z * z + poly);
  float big = 1.0f - erfc;
  big = x < 0 ? -big : big;
  float x2 = x * x;
  // 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
  float small = 1.1283791671f * x *
                (1.0f + x2 * (-1.0f / 3 + x2 * (1.0f / 10 + x2 * (-1.0f / 42 + x2 * (1.0f / 216 - x2 / 1320)))));
  return z < 0.5f ? small : big;
}

}  // namespace kiln::engine::cpu::vec
