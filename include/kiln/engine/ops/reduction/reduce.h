#pragma once
// Reduce layers: a reduction over some axes.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

enum class ReduceOp : uint8_t { Sum, Mean, Max, Min, Prod, Any, All, ArgMax, ArgMin };
const char* reduce_op_name(ReduceOp op);

/// Reduction over `axes` (non-negative, sorted). ArgMax/ArgMin take exactly one axis and give Int64.
struct ReduceParams {
  ReduceOp op = ReduceOp::Sum;
  std::vector<int64_t> axes;
  bool keep_dims = false;
  KILN_VISIT_FIELDS(v("op", op); v("axes", axes); v("keep_dims", keep_dims))
};

}  // namespace kiln::engine
