#pragma once
// Comparison of a computed tensor with a reference, as `kiln run --compare` reports it.

#include <string>

#include "kiln/support/host_tensor.h"

namespace kiln::cli {

struct Comparison {
  bool shape_match = true;
  double max_abs_error = 0.0;  // over elements finite on both sides; inf when the non-finite ones differ
  double max_rel_error = 0.0;  // over elements finite on both sides whose reference is non-zero
  double cosine = 1.0;     // over elements finite on both sides; 1 when both are all zeros; NaN (see below)
  int64_t mismatches = 0;  // elements beyond tolerance
  int64_t non_finite_mismatches = 0;  // elements non-finite on one side only, or non-finite and different
  bool passed = true;                 // numpy.allclose(actual, expected, rtol, atol, equal_nan=True)
};

/// Compares element by element in double precision (any dtypes): |a - b| <= atol + rtol * |b| for finite
/// elements; a non-finite element matches only the same non-finite value in the reference (inf with the same
/// sign, NaN with NaN). Any non-finite mismatch fails the comparison and makes the cosine NaN: an output of
/// inf where the reference is finite is not "similar", whatever its finite elements say.
Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, double atol, double rtol);

}  // namespace kiln::cli
