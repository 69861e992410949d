// FP8 E4M3 rounding on the host (engine/ops/fp8.h): the values every FP8 tactic must reproduce. The GPU
// quantization pass is checked against these functions in tests/engine/backends/cuda/fp8_matmul_test.cpp.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/ops/fp8.h"

namespace kiln::engine {
namespace {

using ops::e4m3_to_float;
using ops::float_to_e4m3;

TEST(Fp8Rounding, EveryFiniteCodeDecodesAndEncodesToItself) {
  int finite = 0;
  for (int code = 0; code < 256; ++code) {
    const auto bits = static_cast<uint8_t>(code);
    const float v = e4m3_to_float(bits);
    if ((code & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(v)) << code;
      continue;
    }
    ++finite;
    // (negative zero keeps its sign)
    EXPECT_EQ(float_to_e4m3(v), bits) << code << " = " << v;
  }
  EXPECT_EQ(finite, 254);
  // The format's landmarks: the largest value, the smallest normal and subnormal.
  EXPECT_EQ(e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(e4m3_to_float(0xb8), -1.0f);
}

TEST(Fp8Rounding, NearestWithTiesToEven) {
  // Between 1 (0x38) and 1.125 (0x39): below the midpoint down, above up, the midpoint to the even code.
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);
  EXPECT_EQ(float_to_e4m3(1.06251f), 0x39);
  EXPECT_EQ(float_to_e4m3(1.06249f), 0x38);
  // 1.1875 lies between 1.125 (0x39, odd) and 1.25 (0x3a, even).
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3a);
  // Carry into the next binade: 1.9375 is the midpoint of 1.875 (0x3f, odd) and 2 (0x40).
  EXPECT_EQ(float_to_e4m3(1.9375f), 0x40);
  // Subnormals: steps of 2^-9; the midpoint of 0 and 2^-9 rounds to 0 (even), 3 x 2^-10 to 2 x 2^-9.
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(float_to_e4m3(std::ldexp(3.0f, -10)), 0x02);
  EXPECT_EQ(float_to_e4m3(-std::ldexp(7.0f, -9)), 0x87);
  // The last subnormal step rounds up into the first normal.
  EXPECT_EQ(float_to_e4m3(std::ldexp(7.5f, -9)), 0x08);
  // Every float between two neighbouring codes goes to the nearer one.
  for (int code = 0; code < 0x7e; ++code) {
    const float lo = e4m3_to_float(static_cast<uint8_t>(code)),
                hi = e4m3_to_float(static_cast<uint8_t>(code + 1));
    for (float t : {0.1f, 0.3f, 0.49f, 0.51f, 0.7f, 0.9f}) {
      const float v = lo + t * (hi - lo);
      EXPECT_EQ(float_to_e4m3(v), t < 0.5f ? code : code + 1) << v;
    }
  }
}

TEST(Fp8Rounding, SaturatesAndKeepsNan) {
  EXPECT_EQ(float_to_e4m3(448.0f), 0x7e);
  EXPECT_EQ(float_to_e4m3(463.9f), 0x7e);
  EXPECT_EQ(float_to_e4m3(1e6f), 0x7e);
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::infinity()), 0x7e);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::infinity()), 0xfe);
  EXPECT_EQ(float_to_e4m3(std::nanf("")), 0x7f);
  EXPECT_EQ(float_to_e4m3(1e-30f), 0x00);
  EXPECT_EQ(float_to_e4m3(-1e-30f), 0x80);
}

TEST(Fp8Rounding, WeightsGetOneScalePerTensor) {
  const ops::Fp8Weights q = ops::quantize_e4m3({0.5f, -2.0f, 0.0f, 1.0f});
  EXPECT_FLOAT_EQ(q.scale, 2.0f / 448.0f);
  ASSERT_EQ(q.values.size(), 4u);
  EXPECT_EQ(q.values[1], 0xfe);  // -max |w| is -448
  EXPECT_EQ(q.values[2], 0x00);
  // 0.5 / scale = 112 and 1 / scale = 224, both E4M3 values.
  EXPECT_EQ(e4m3_to_float(q.values[0]), 112.0f);
  EXPECT_EQ(e4m3_to_float(q.values[3]), 224.0f);
  // All zeros (or nothing finite to scale by): scale 1.
  EXPECT_EQ(ops::quantize_e4m3({0.0f, 0.0f}).scale, 1.0f);
  EXPECT_EQ(ops::quantize_e4m3({std::numeric_limits<float>::infinity()}).scale, 1.0f);
}

}  // namespace
}  // namespace kiln::engine
