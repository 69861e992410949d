#pragma once
// Activation layers: y = f(x) for one of the activation kinds (also a fused post-op of linalg layers).

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Activations; alpha/beta meanings per kind: LeakyRelu(alpha=slope), Elu(alpha), Selu(none),
/// Softplus(beta, alpha=threshold), HardSigmoid(alpha=slope, beta=offset), Clip(alpha=min, beta=max).
enum class ActivationKind : uint8_t {
  Relu,
  Sigmoid,
  Tanh,
  GeluErf,
  GeluTanh,
  Silu,
  HardSwish,
  HardSigmoid,
  LeakyRelu,
  Elu,
  Selu,
  Softplus,
  Softsign,
  Clip,
  Mish,
};
const char* activation_kind_name(ActivationKind kind);

/// An activation with its parameters (also used as a fused post-op).
struct ActivationParams {
  ActivationKind kind = ActivationKind::Relu;
  double alpha = 0.0;
  double beta = 0.0;
  KILN_VISIT_FIELDS(v("kind", kind); v("alpha", alpha); v("beta", beta))
};

}  // namespace kiln::engine
