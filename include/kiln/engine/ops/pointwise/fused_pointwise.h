#pragma once
// Fused pointwise layers (made by the builder): a program of pointwise instructions evaluated per element.
// Included by kiln/engine/layers.h after LayerKind, which an instruction names.

#include "kiln/engine/ops/params.h"
#include "kiln/engine/ops/pointwise/activation.h"

namespace kiln::engine {

/// One instruction of a fused pointwise program. Operands name a layer input (kInput + i), a weight
/// (kWeight + i) or an earlier instruction's result (kTemp + i).
struct PointwiseInstr {
  static constexpr int64_t kInput = 0, kWeight = 1 << 20, kTemp = 2 << 20;
  LayerKind kind = LayerKind::Elementwise;  // Elementwise, Activation, Unary or Cast
  int64_t op = 0;                           // ElementwiseOp / UnaryOp; Activation uses `activation`
  ActivationParams activation;
  std::vector<int64_t> operands;
  KILN_VISIT_FIELDS(v("kind", kind); v("op", op); v("activation", activation); v("operands", operands))
};

/// A chain of pointwise layers made by the builder; evaluated per output element in float, the last
/// instruction's result is the output (broadcast over all inputs).
struct FusedPointwiseParams {
  std::vector<PointwiseInstr> program;
  KILN_VISIT_FIELDS(v("program", program))
};

}  // namespace kiln::engine
