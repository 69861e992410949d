#pragma once
// Post-ops: the steps a convolution or matrix multiply applies to its result (fused activations, residuals).

#include "kiln/engine/ops/params.h"
#include "kiln/engine/ops/pointwise/activation.h"

namespace kiln::engine {

/// One step after a convolution / matrix multiply, applied in order: an activation, or adding the next
/// extra layer input (a residual, same shape as the output) scaled by `scale`.
struct PostOp {
  enum Kind : uint8_t { Activation, Sum } kind = Activation;
  ActivationParams activation;
  double scale = 1.0;
  KILN_VISIT_FIELDS(v("kind", kind); v("activation", activation); v("scale", scale))
};

}  // namespace kiln::engine
