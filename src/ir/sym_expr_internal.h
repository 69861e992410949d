#pragma once
// Internals shared by the SymExpr source files: the representation and exact rational arithmetic.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/sym_expr.h"

namespace kiln::ir {

struct SymExpr::Rep {
  Kind kind = Kind::Integer;
  int64_t num = 0;   // Integer value, or Rational numerator
  int64_t den = 1;   // Rational denominator (> 1 for Rational)
  std::string name;  // Symbol name
  std::vector<SymExpr> ops;
  size_t hash = 0;
};

namespace symdetail {

/// An exact rational with a positive denominator in lowest terms. Every operation throws
/// kiln::Error(InvalidInput) when a result does not fit in 64 bits.
struct Q {
  int64_t n = 0;
  int64_t d = 1;
  bool is_int() const { return d == 1; }
  bool operator==(const Q&) const = default;
};

Q q_make(__int128 n, __int128 d);  // normalizes; throws on d == 0 ("division by zero") or overflow
Q q_add(Q a, Q b);
Q q_sub(Q a, Q b);
Q q_mul(Q a, Q b);
Q q_div(Q a, Q b);
Q q_pow(Q a, int64_t e);
int64_t q_floor(Q a);
int64_t q_ceil(Q a);
Q q_mod(Q a, Q b);  // Python semantics: a - b * floor(a / b)
int q_cmp(Q a, Q b);

/// Total structural order used to sort operands canonically.
int compare(const SymExpr& a, const SymExpr& b);
/// True when the expression is integer-valued for every integer assignment of its symbols.
bool is_integer_valued(const SymExpr& e);
/// The constant value of an Integer or Rational expression.
bool as_q(const SymExpr& e, Q* out);
SymExpr from_q(Q q);

}  // namespace symdetail
}  // namespace kiln::ir
