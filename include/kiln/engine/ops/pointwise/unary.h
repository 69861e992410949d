#pragma once
// Unary layers: elementwise math on one input.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Unary math. Not takes Bool; IsNan/IsInf give Bool; the rest keep the input dtype.
enum class UnaryOp : uint8_t {
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Abs,
  Neg,
  Recip,
  Erf,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Floor,
  Ceil,
  Round,
  Sign,
  Not,
  Expm1,
  Log1p,
  IsNan,
  IsInf,
};
const char* unary_op_name(UnaryOp op);

struct UnaryParams {
  UnaryOp op = UnaryOp::Exp;
  KILN_VISIT_FIELDS(v("op", op))
};

}  // namespace kiln::engine
