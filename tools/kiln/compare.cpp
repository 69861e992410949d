#include "compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::cli {

Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, double atol, double rtol) {
  Comparison c;
  if (actual.sizes() != expected.sizes()) {
    c.shape_match = false;
    c.passed = false;
    c.cosine = 0.0;
    return c;
  }
  double dot = 0.0;
  double norm_a = 0.0;
  double norm_b = 0.0;
  const int64_t n = actual.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double a = actual.get_as_double(i);
    const double b = expected.get_as_double(i);
    if (!std::isfinite(a) || !std::isfinite(b)) {
      const bool same = (std::isnan(a) && std::isnan(b)) || a == b;
      if (!same) {
        ++c.mismatches;
        ++c.non_finite_mismatches;
      }
      continue;
    }
    const double diff = std::fabs(a - b);
    if (diff > atol + rtol * std::fabs(b)) ++c.mismatches;
    c.max_abs_error = std::max(c.max_abs_error, diff);
    if (b != 0.0) c.max_rel_error = std::max(c.max_rel_error, diff / std::fabs(b));
    dot += a * b;
    norm_a += a * a;
    norm_b += b * b;
  }
  if (c.non_finite_mismatches > 0) {
    c.max_abs_error = std::numeric_limits<double>::infinity();
    c.cosine = std::numeric_limits<double>::quiet_NaN();
  } else if (norm_a > 0.0 && norm_b > 0.0) {
    c.cosine = dot / (std::sqrt(norm_a) * std::sqrt(norm_b));
  } else {
    c.cosine = (norm_a == 0.0 && norm_b == 0.0) ? 1.0 : 0.0;
  }
  c.passed = c.mismatches == 0;
  return c;
}

}  // namespace kiln::cli
