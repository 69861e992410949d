#pragma once
// The vec pointwise kernels' comparisons, one loop per op over lanes of any type T (float: logic.cpp; int64:
// integer.cpp), yielding Bool as 0.0f / 1.0f. C++'s comparisons of floats are IEEE's, as torch's: any
// comparison with a NaN is false, != is true. Inline, for the callers' SIMD clones to vectorize.

#include <cstdint>

#include "kiln/engine/layers.h"

namespace kiln::engine::cpu::fast {

/// y = a op b for a comparison `op`; false (nothing written) for any other op.
template <class T>
inline bool compare_lanes(ElementwiseOp op, const T* a, const T* b, float* y, int64_t n) {
  switch (op) {
    case ElementwiseOp::Equal:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] == b[i] ? 1.0f : 0.0f;
      return true;
    case ElementwiseOp::NotEqual:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] != b[i] ? 1.0f : 0.0f;
      return true;
    case ElementwiseOp::Less:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] < b[i] ? 1.0f : 0.0f;
      return true;
    case ElementwiseOp::LessEqual:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] <= b[i] ? 1.0f : 0.0f;
      return true;
    case ElementwiseOp::Greater:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] > b[i] ? 1.0f : 0.0f;
      return true;
    case ElementwiseOp::GreaterEqual:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] >= b[i] ? 1.0f : 0.0f;
      return true;
    default: return false;
  }
}

}  // namespace kiln::engine::cpu::fast
