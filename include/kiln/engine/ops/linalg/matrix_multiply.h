#pragma once
// Matrix multiply layers.

#include "kiln/engine/ops/linalg/post_op.h"
#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Batched matrix multiply with broadcasting over leading dims; both operands rank >= 2.
/// Layer inputs: [a, b (absent when weights[0] holds b), residuals for Sum post-ops...].
/// Weights: [b or undefined, bias [N] or undefined] (the builder moves constant operands here).
struct MatrixMultiplyParams {
  bool transpose_a = false;
  bool transpose_b = false;
  std::vector<PostOp> post_ops;
  KILN_VISIT_FIELDS(v("transpose_a", transpose_a); v("transpose_b", transpose_b); v("post_ops", post_ops))
};

}  // namespace kiln::engine
