// vec::exp (engine/backends/cpu/vec_math.h), the exp behind the cpu backend's vectorized softmax, sigmoid,
// SiLU, tanh and erf, against std::exp in double. Tolerance: relative 3e-7. The degree-6 polynomial's
// truncation error on |r| <= ln2/2 is r^7/7! ~ 1.2e-7, plus the rounding of a few float operations; the worst
// measured over the range is 2.45e-7.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/backends/cpu/vec_math.h"

namespace kiln::engine::cpu {
namespace {

TEST(VecMath, ExpMatchesStdExpOverFloatsRange) {
  double worst = 0.0;
  float at = 0.0f;
  for (double x = -87.3; x <= 88.72; x += 0.00071) {
    const float xf = static_cast<float>(x);
    const double want = std::exp(static_cast<double>(xf));
    const float got = vec::exp(xf);
    ASSERT_TRUE(std::isfinite(got)) << "exp(" << xf << ") = " << got << ", want " << want;
    const double rel = std::fabs(got - want) / want;
    if (rel > worst) worst = rel, at = xf;
  }
  EXPECT_LE(worst, 3e-7) << "at x = " << at;
}

// Inputs in [88.38, 88.72] round to n = 128 in 2^n * p(r), one past float's largest exponent: exp returned
// +inf there although the result is finite (up to FLT_MAX).
TEST(VecMath, ExpIsFiniteUpToFloatMax) {
  for (float x : {88.3769f, 88.5f, 88.7f, 88.7228f}) {
    const float got = vec::exp(x);
    EXPECT_TRUE(std::isfinite(got)) << x;
    EXPECT_NEAR(got / std::exp(static_cast<double>(x)), 1.0, 3e-7) << x;
  }
  EXPECT_EQ(vec::exp(88.7229f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(vec::exp(1000.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(vec::exp(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(vec::exp(-1000.0f), 0.0f);
  EXPECT_EQ(vec::exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(vec::exp(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace kiln::engine::cpu
