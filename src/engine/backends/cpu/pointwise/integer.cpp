// The vec pointwise kernels' integer instructions (instructions.h): Int64 and Int32 values held in int64
// lanes, never in float or double (exact beyond 2^24 and 2^53), with the reference's semantics
// (engine/ops/scalar_ops.h): add, sub, mul and neg wrap, division truncates or floors, mod takes the
// divisor's sign, the lowest value divided by -1 gives itself, division by zero is an error; comparisons
// yield Bool (0.0f / 1.0f), select picks int64 lanes, casts convert between the lanes as a store from double
// does.

#include <cstdint>

#include "engine/backends/cpu/kernel_registry.h"
#include "engine/backends/cpu/pointwise/compare.h"
#include "engine/backends/cpu/pointwise/instructions.h"
#include "engine/backends/cpu/vec_math.h"
#include "engine/ops/scalar_ops.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::fast {
namespace {

using u64 = uint64_t;

bool binary_ok(ElementwiseOp op) {
  return op != ElementwiseOp::Pow && !is_logical(op);  // pow stays with the reference (a loop per element)
}

bool unary_ok(UnaryOp op) { return op == UnaryOp::Abs || op == UnaryOp::Neg || op == UnaryOp::Sign; }

bool lane_dtype(DType d) {
  return d == DType::Int64 || d == DType::Int32 || d == DType::Float32 || d == DType::Bool;
}

/// Whether any of n divisors is zero (a vectorizable scan before the division, which must not trap).
KILN_SIMD_CLONES
bool any_zero(const int64_t* b, int64_t n) {
  bool zero = false;
  for (int64_t i = 0; i < n; ++i) zero |= b[i] == 0;
  return zero;
}

KILN_SIMD_CLONES
void run_binary(ElementwiseOp op, const int64_t* a, const int64_t* b, int64_t* y, int64_t n) {
  switch (op) {
    case ElementwiseOp::Add:
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<int64_t>(u64(a[i]) + u64(b[i]));
      return;
    case ElementwiseOp::Sub:
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<int64_t>(u64(a[i]) - u64(b[i]));
      return;
    case ElementwiseOp::Mul:
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<int64_t>(u64(a[i]) * u64(b[i]));
      return;
    case ElementwiseOp::Max:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] > b[i] ? a[i] : b[i];
      return;
    case ElementwiseOp::Min:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] < b[i] ? a[i] : b[i];
      return;
    default: break;
  }
  // Division: b != 0 was checked; b == -1 is negation (kLowest / -1 would trap).
  switch (op) {
    case ElementwiseOp::Div:
    case ElementwiseOp::TruncDiv:
      for (int64_t i = 0; i < n; ++i) y[i] = b[i] == -1 ? static_cast<int64_t>(0 - u64(a[i])) : a[i] / b[i];
      return;
    case ElementwiseOp::FloorDiv:
      for (int64_t i = 0; i < n; ++i) {
        if (b[i] == -1) {
          y[i] = static_cast<int64_t>(0 - u64(a[i]));
        } else {
          const int64_t q = a[i] / b[i];
          y[i] = q * b[i] != a[i] && ((a[i] < 0) != (b[i] < 0)) ? q - 1 : q;
        }
      }
      return;
    case ElementwiseOp::Mod:
      for (int64_t i = 0; i < n; ++i) {
        const int64_t r = b[i] == -1 ? 0 : a[i] % b[i];
        y[i] = r != 0 && ((r < 0) != (b[i] < 0)) ? r + b[i] : r;
      }
      return;
    default: return;
  }
}

KILN_SIMD_CLONES
void run_compare(ElementwiseOp op, const int64_t* a, const int64_t* b, float* y, int64_t n) {
  compare_lanes(op, a, b, y, n);
}

KILN_SIMD_CLONES
void run_unary(UnaryOp op, const int64_t* x, int64_t* y, int64_t n) {
  switch (op) {
    case UnaryOp::Abs:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0 ? static_cast<int64_t>(0 - u64(x[i])) : x[i];
      return;
    case UnaryOp::Neg:
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<int64_t>(0 - u64(x[i]));
      return;
    case UnaryOp::Sign:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? 1 : (x[i] < 0 ? -1 : 0);
      return;
    default: return;
  }
}

KILN_SIMD_CLONES
void run_select(const float* c, const int64_t* a, const int64_t* b, int64_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = c[i] != 0.0f ? a[i] : b[i];
}

/// An integer to Float32 as the reference converts it: to double, then to float.
KILN_SIMD_CLONES
void int_to_float(const int64_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<double>(x[i]));
}

KILN_SIMD_CLONES
void int_to_bool(const int64_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] != 0 ? 1.0f : 0.0f;
}

/// Saturated into [lo, hi] (a cast between integer dtypes).
KILN_SIMD_CLONES
void clamp_ints(const int64_t* x, int64_t lo, int64_t hi, int64_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
}

/// A float (or a Bool's 0 / 1) to an integer in [lo, hi] as a store from double does: truncated, saturated,
/// NaN gives 0. `flo` and `fhi` are lo and hi as doubles (hi rounds up to 2^63 for Int64: at and above it
/// saturates).
KILN_SIMD_CLONES
void float_to_int(const float* x, int64_t lo, int64_t hi, double flo, double fhi, int64_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    y[i] = v != v ? 0 : (v <= flo ? lo : (v >= fhi ? hi : static_cast<int64_t>(v)));
  }
}

void run_cast(DType from, DType to, const void* x, void* y, int64_t n) {
  const bool from_int = is_integral(from);
  if (to == DType::Float32 || to == DType::Bool) {  // from an integer (float lanes go to logic.cpp)
    const auto* v = static_cast<const int64_t*>(x);
    if (to == DType::Float32) {
      int_to_float(v, static_cast<float*>(y), n);
    } else {
      int_to_bool(v, static_cast<float*>(y), n);
    }
    return;
  }
  const ops::IntRange r = ops::int_range(to);
  if (from_int) {
    clamp_ints(static_cast<const int64_t*>(x), r.lo, r.hi, static_cast<int64_t*>(y), n);
  } else {
    float_to_int(static_cast<const float*>(x), r.lo, r.hi, static_cast<double>(r.lo),
                 static_cast<double>(r.hi), static_cast<int64_t*>(y), n);
  }
}

}  // namespace

bool is_integer(const PointwiseInstr& in, DType source, DType result) {
  return is_integral(source) || is_integral(result);
}

bool integer_ok(const PointwiseInstr& in, DType source, DType result, std::string* why) {
  if (!lane_dtype(source) || !lane_dtype(result)) {
    return refuse(why, std::string(dtype_name(lane_dtype(source) ? result : source)) +
                           " (vec pointwise takes f32, bool, i64 and i32)");
  }
  switch (in.kind) {
    case LayerKind::Elementwise:
      if (!binary_ok(static_cast<ElementwiseOp>(in.op))) {
        return refuse(why, std::string("integer ") + elementwise_op_name(static_cast<ElementwiseOp>(in.op)));
      }
      return true;
    case LayerKind::Unary:
      if (!unary_ok(static_cast<UnaryOp>(in.op))) {
        return refuse(why, std::string("integer ") + unary_op_name(static_cast<UnaryOp>(in.op)));
      }
      return true;
    case LayerKind::Select:
    case LayerKind::Cast: return true;
    default: return refuse(why, std::string("an integer ") + layer_kind_name(in.kind) + " step");
  }
}

void run_integer(const PointwiseInstr& in, DType source, DType result, const void* const* x, void* y,
                 int64_t n) {
  const auto* a = static_cast<const int64_t*>(x[0]);
  switch (in.kind) {
    case LayerKind::Elementwise: {
      const auto op = static_cast<ElementwiseOp>(in.op);
      const auto* b = static_cast<const int64_t*>(x[1]);
      if (is_comparison(op)) {
        run_compare(op, a, b, static_cast<float*>(y), n);
        return;
      }
      if (op == ElementwiseOp::Div || op == ElementwiseOp::TruncDiv || op == ElementwiseOp::FloorDiv ||
          op == ElementwiseOp::Mod) {
        KILN_CHECK(!any_zero(b, n), InvalidInput, "integer ",
                   op == ElementwiseOp::Mod ? "modulo" : "division", " by zero");
      }
      run_binary(op, a, b, static_cast<int64_t*>(y), n);
      return;
    }
    case LayerKind::Unary: run_unary(static_cast<UnaryOp>(in.op), a, static_cast<int64_t*>(y), n); return;
    case LayerKind::Select:
      run_select(static_cast<const float*>(x[0]), static_cast<const int64_t*>(x[1]),
                 static_cast<const int64_t*>(x[2]), static_cast<int64_t*>(y), n);
      return;
    case LayerKind::Cast: run_cast(source, result, x[0], y, n); return;
    default: return;
  }
}

}  // namespace kiln::engine::cpu::fast
