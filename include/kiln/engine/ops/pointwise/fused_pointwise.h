#pragma once
// Fused pointwise layers (made by the builder): a program of pointwise instructions evaluated per element.
// Included by kiln/engine/layers.h after LayerKind, which an instruction names.

#include "kiln/engine/ops/params.h"
#include "kiln/engine/ops/pointwise/activation.h"

namespace kiln::engine {

/// One instruction of a fused pointwise program. Operands name a layer input (kInput + i), a weight
/// (kWeight + i) or an earlier instruction's result (kTemp + i). Elementwise takes 2 operands, Select 3
/// (condition, then, else: the condition's nonzero values pick `then`), the others 1. Each instruction's
/// result has a dtype (see FusedPointwiseParams): Bool for comparisons, logical ops, not, isnan and isinf,
/// the target for a Cast, `then`'s for a Select, else its first operand's.
struct PointwiseInstr {
  static constexpr int64_t kInput = 0, kWeight = 1 << 20, kTemp = 2 << 20;
  LayerKind kind = LayerKind::Elementwise;  // Elementwise, Activation, Unary, Cast or Select
  int64_t op = 0;  // ElementwiseOp / UnaryOp; a Cast's target DType; Activation uses `activation`
  ActivationParams activation;
  std::vector<int64_t> operands;
  KILN_VISIT_FIELDS(v("kind", kind); v("op", op); v("activation", activation); v("operands", operands))
};

/// A chain of pointwise layers made by the builder; evaluated per output element, the last instruction's
/// result is the output (broadcast over all inputs), stored in the output tensor's dtype. Values flow between
/// instructions unrounded (the reference holds floats in double, the kernels in float; integers in int64,
/// exactly, an Int32 one unwrapped) except through a Cast, which rounds to its target as storing does (a Bool
/// is 0 or 1); a Bool operand reads as 0 or 1.
struct FusedPointwiseParams {
  std::vector<PointwiseInstr> program;
  KILN_VISIT_FIELDS(v("program", program))
};

}  // namespace kiln::engine
