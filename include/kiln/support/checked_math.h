#pragma once
// Overflow-checked int64 arithmetic for values that come from untrusted input (sizes, strides, symbol values,
// op arguments): the one home of Kiln's __builtin_*_overflow checks. Each throws kiln::Error(InvalidInput)
// "integer overflow computing <what> (<a> <op> <b>)" instead of wrapping; division and modulo also reject a
// zero divisor and INT64_MIN / -1.

#include <cstdint>
#include <limits>

#include "kiln/support/error.h"

namespace kiln {

/// a + b.
inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  KILN_CHECK(!__builtin_add_overflow(a, b, &r), InvalidInput, "integer overflow computing ", what, " (", a, " + ",
             b, ")");
  return r;
}

/// a - b.
inline int64_t checked_sub(int64_t a, int64_t b, const char* what) {
  int64_t r;
  KILN_CHECK(!__builtin_sub_overflow(a, b, &r), InvalidInput, "integer overflow computing ", what, " (", a, " - ",
             b, ")");
  return r;
}

/// a * b.
inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  KILN_CHECK(!__builtin_mul_overflow(a, b, &r), InvalidInput, "integer overflow computing ", what, " (", a, " * ",
             b, ")");
  return r;
}

/// -a (INT64_MIN has no negation).
inline int64_t checked_neg(int64_t a, const char* what) {
  KILN_CHECK(a != std::numeric_limits<int64_t>::min(), InvalidInput, "integer overflow computing ", what,
             " (-(", a, "))");
  return -a;
}

/// floor(a / b), Python's //.
inline int64_t checked_floordiv(int64_t a, int64_t b, const char* what) {
  KILN_CHECK(b != 0, InvalidInput, "division by zero computing ", what, " (", a, " // 0)");
  KILN_CHECK(!(a == std::numeric_limits<int64_t>::min() && b == -1), InvalidInput, "integer overflow computing ",
             what, " (", a, " // -1)");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

/// ceil(a / b).
inline int64_t checked_ceildiv(int64_t a, int64_t b, const char* what) {
  return checked_neg(checked_floordiv(checked_neg(a, what), b, what), what);
}

/// a mod b with the sign of b, Python's %.
inline int64_t checked_mod(int64_t a, int64_t b, const char* what) {
  KILN_CHECK(b != 0, InvalidInput, "modulo by zero computing ", what, " (", a, " % 0)");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/// The product of `values` (1 for none).
template <typename Range>
int64_t checked_product(const Range& values, const char* what) {
  int64_t r = 1;
  for (int64_t v : values) r = checked_mul(r, v, what);
  return r;
}

}  // namespace kiln
