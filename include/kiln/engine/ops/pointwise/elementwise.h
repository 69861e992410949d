#pragma once
// Elementwise layers: a binary operation with numpy broadcasting.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Binary elementwise operations (numpy broadcasting). Comparisons give Bool; And/Or/Xor take Bool.
enum class ElementwiseOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  TruncDiv,
  Mod,
  Pow,
  Max,
  Min,
  Equal,
  NotEqual,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  And,
  Or,
  Xor,
};
const char* elementwise_op_name(ElementwiseOp op);
bool is_comparison(ElementwiseOp op);
bool is_logical(ElementwiseOp op);

struct ElementwiseParams {
  ElementwiseOp op = ElementwiseOp::Add;
  KILN_VISIT_FIELDS(v("op", op))
};

}  // namespace kiln::engine
