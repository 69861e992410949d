#pragma once
// Comparison of a computed tensor with a reference, as `kiln run --compare` reports it.

#include <string>

#include "kiln/support/host_tensor.h"

namespace kiln::cli {

struct Comparison {
  bool shape_match = true;
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;  // over elements whose reference is non-zero
  double cosine = 1.0;         // 1 when both are all zeros
  int64_t mismatches = 0;      // elements beyond tolerance
  bool passed = true;          // numpy.allclose(actual, expected, rtol, atol): |a - b| <= atol + rtol * |b|
};

/// Compares element by element in double precision (any dtypes). Infinities match when equal; NaN never
/// matches (numpy's default equal_nan=False).
Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, double atol, double rtol);

}  // namespace kiln::cli
