// The vec pointwise kernels' logic instructions (instructions.h): comparisons, logical ops, not / isnan /
// isinf, select (where) and casts between Float32 and Bool. A Bool is held as 0.0f or 1.0f, so a mask, the
// select that reads it and the float math around them run in one program: GPT-2's causal mask (and, then
// where) and the comparisons of attention masks were reference kernels and broke pointwise fusion.

#include <algorithm>
#include <cmath>

#include "engine/backends/cpu/kernel_registry.h"
#include "engine/backends/cpu/pointwise/compare.h"
#include "engine/backends/cpu/pointwise/instructions.h"
#include "engine/backends/cpu/vec_math.h"

namespace kiln::engine::cpu::fast {
namespace {

bool is_logic_unary(UnaryOp op) { return op == UnaryOp::Not || op == UnaryOp::IsNan || op == UnaryOp::IsInf; }

/// Comparisons (compare.h) and logical ops of floats and Bools.
KILN_SIMD_CLONES
void run_binary_logic(ElementwiseOp op, const float* a, const float* b, float* y, int64_t n) {
  if (compare_lanes(op, a, b, y, n)) return;
  switch (op) {
    case ElementwiseOp::And:
      for (int64_t i = 0; i < n; ++i) y[i] = (a[i] != 0.0f) & (b[i] != 0.0f) ? 1.0f : 0.0f;
      return;
    case ElementwiseOp::Or:
      for (int64_t i = 0; i < n; ++i) y[i] = (a[i] != 0.0f) | (b[i] != 0.0f) ? 1.0f : 0.0f;
      return;
    case ElementwiseOp::Xor:
      for (int64_t i = 0; i < n; ++i) y[i] = (a[i] != 0.0f) != (b[i] != 0.0f) ? 1.0f : 0.0f;
      return;
    default: return;
  }
}

KILN_SIMD_CLONES
void run_unary_logic(UnaryOp op, const float* x, float* y, int64_t n) {
  switch (op) {
    case UnaryOp::Not:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] == 0.0f ? 1.0f : 0.0f;
      return;
    case UnaryOp::IsNan:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] != x[i] ? 1.0f : 0.0f;
      return;
    case UnaryOp::IsInf:
      for (int64_t i = 0; i < n; ++i) y[i] = std::fabs(x[i]) == INFINITY ? 1.0f : 0.0f;
      return;
    default: return;
  }
}

/// y = c ? a : b, the picked value copied as it is (NaN, -0.0, infinities).
KILN_SIMD_CLONES
void run_select(const float* c, const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = c[i] != 0.0f ? a[i] : b[i];
}

/// A cast to Bool: 1 for every nonzero value (NaN too), as storing into a Bool does.
KILN_SIMD_CLONES
void run_to_bool(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] != 0.0f ? 1.0f : 0.0f;
}

}  // namespace

bool is_logic(const PointwiseInstr& in) {
  switch (in.kind) {
    case LayerKind::Elementwise: {
      const auto op = static_cast<ElementwiseOp>(in.op);
      return is_comparison(op) || is_logical(op);
    }
    case LayerKind::Unary: return is_logic_unary(static_cast<UnaryOp>(in.op));
    case LayerKind::Select:
    case LayerKind::Cast: return true;
    default: return false;
  }
}

bool logic_ok(const PointwiseInstr& in, std::string* why) {
  size_t arity = 1;
  switch (in.kind) {
    case LayerKind::Elementwise:
      if (in.op < 0 || in.op > static_cast<int64_t>(ElementwiseOp::Xor))
        return refuse(why, "a bad elementwise op");
      arity = 2;
      break;
    case LayerKind::Select: arity = 3; break;
    case LayerKind::Cast: {
      const auto to = static_cast<DType>(in.op);
      if (to != DType::Float32 && to != DType::Bool) {
        return refuse(why, std::string("a cast to ") +
                               (in.op >= 0 && in.op <= static_cast<int64_t>(DType::Bool) ? dtype_name(to)
                                                                                         : "a bad dtype"));
      }
      break;
    }
    default: break;
  }
  if (in.operands.size() != arity) {
    return refuse(why, std::string("a ") + layer_kind_name(in.kind) + " step without " +
                           std::to_string(arity) + " operand" + (arity == 1 ? "" : "s"));
  }
  return true;
}

void run_logic(const PointwiseInstr& in, const float* const* x, float* y, int64_t n) {
  switch (in.kind) {
    case LayerKind::Elementwise:
      run_binary_logic(static_cast<ElementwiseOp>(in.op), x[0], x[1], y, n);
      return;
    case LayerKind::Unary: run_unary_logic(static_cast<UnaryOp>(in.op), x[0], y, n); return;
    case LayerKind::Select: run_select(x[0], x[1], x[2], y, n); return;
    case LayerKind::Cast:
      if (static_cast<DType>(in.op) == DType::Bool) {
        run_to_bool(x[0], y, n);
      } else if (y != x[0]) {
        std::copy(x[0], x[0] + n, y);  // to Float32: a Bool's 0 / 1 or the float itself
      }
      return;
    default: return;
  }
}

}  // namespace kiln::engine::cpu::fast
