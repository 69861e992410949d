#pragma once
// Fill layers: tensors made from scalars (constant, arange, linspace).

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Constant: every element = value. Arange: start + i*delta along a 1-D output. Linspace: `dims[0]`
/// points from start to end inclusive. Optional inputs: 0 = shape tensor (output dims), 1 = start
/// scalar, 2 = delta (Arange) or end (Linspace) scalar; all evaluated on the host at shape time.
struct FillParams {
  enum Op : uint8_t { Constant, Arange, Linspace } op = Constant;
  DType dtype = DType::Float32;
  std::vector<int64_t> dims;
  double value = 0.0;  // Constant value, or Arange/Linspace start.
  double delta = 1.0;  // Arange step, or Linspace end.
  KILN_VISIT_FIELDS(v("op", op); v("dtype", dtype); v("dims", dims); v("value", value); v("delta", delta))
};

}  // namespace kiln::engine
