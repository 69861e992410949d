#pragma once
// SymExpr: an immutable symbolic integer expression (sizes and strides of dynamic shapes).
// Parsed from sympy srepr strings as torch.export writes them, evaluated under bindings and bounded under
// ranges.

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

/// Inclusive integer range of a symbol or expression. kUnbounded stands for +infinity (sympy int_oo).
struct SymRange {
  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
  /// A min of kNegUnbounded (or less) stands for -infinity in bound() results.
  static constexpr int64_t kNegUnbounded = -kUnbounded;
  int64_t min = 0;
  int64_t max = kUnbounded;
  bool operator==(const SymRange&) const = default;
};

using SymBindings = std::map<std::string, int64_t>;
using SymRanges = std::map<std::string, SymRange>;

class SymExpr {
 public:
  enum class Kind { Integer, Rational, Symbol, Add, Mul, Pow, FloorDiv, CeilToInt, Mod, Max, Min, TrueDiv };

  /// The constant 0.
  SymExpr();
  /// A constant (implicit, so `SymExpr e = 3;` and std::vector<SymExpr>{1, 2} work).
  SymExpr(int64_t value);  // NOLINT(google-explicit-constructor)
  /// A symbol; the name must be an identifier ([A-Za-z_][A-Za-z0-9_]*), else kiln::Error(InvalidInput).
  static SymExpr symbol(std::string name);
  static SymExpr rational(int64_t numerator, int64_t denominator);
  /// Builds an operation node in canonical form: nested Add/Mul/Max/Min flatten, constants fold, like terms and
  /// equal factors combine (s0 + s0 = 2*s0, s0*s0 = s0**2), 0 in Add and 1 in Mul drop, x*0 = 0, a number
  /// times a sum distributes, a/c with constant c becomes (1/c)*a, floordiv/mod by a positive constant take out
  /// divisible terms, and operands sort in a stable structural order. Structurally equal results compare equal.
  /// Kinds: Pow(base, exp), FloorDiv(a, b), Mod(a, b), CeilToInt(x), TrueDiv(a, b), Add/Mul/Max/Min(n operands).
  static SymExpr make(Kind kind, std::vector<SymExpr> operands);

  /// Parses sympy srepr text, e.g. "Mul(Integer(2), Symbol('s77', positive=True, integer=True))".
  /// Heads: Integer, Rational, Symbol (keyword arguments ignored), Add, Mul, Pow/PowByNatural (Pow(s0, -1) is
  /// 1/s0), FloorDiv/CleanDiv/IntDiv, CeilDiv, ModularIndexing(x, d, m) = mod(floordiv(x, d), m), Mod/PythonMod
  /// (Python semantics), CeilToInt/ceiling, FloorToInt/floor, TrueDiv/IntTrueDiv/FloatTrueDiv, Max, Min, Identity,
  /// One/Zero/NegativeOne/Half. oo, int_oo, Infinity(), IntInfinity() parse as the constant SymRange::kUnbounded
  /// and their negations as SymRange::kNegUnbounded. Nesting deeper than 256 levels is rejected.
  /// Throws kiln::Error(InvalidInput) quoting the text on anything it does not understand.
  static SymExpr parse_srepr(std::string_view text);
  /// Parses the infix form that to_string() prints ("2*s77 + 1", "floordiv(s0, 2)", "max(s0, 1)").
  static SymExpr parse(std::string_view text);

  Kind kind() const;
  bool is_constant() const { return kind() == Kind::Integer; }
  /// The value when this is an integer constant.
  std::optional<int64_t> as_int() const;
  /// The name of a Symbol (empty otherwise).
  const std::string& symbol_name() const;
  /// Numerator/denominator of a Rational (denominator 1 for Integer).
  int64_t numerator() const;
  int64_t denominator() const;
  const std::vector<SymExpr>& operands() const;
  std::set<std::string> free_symbols() const;

  /// Integer value under `bindings`. Throws kiln::Error(InvalidInput) naming an unbound symbol, on division by
  /// zero, or when the result is not an integer.
  int64_t evaluate(const SymBindings& bindings) const;
  /// Interval bound of the expression given symbol ranges (symbols without a range are [0, unbounded]; sympy
  /// symbols from torch.export are positive integers, so [1, unbounded] when `positive_default`).
  SymRange bound(const SymRanges& ranges, bool positive_default = true) const;
  /// Replaces symbols by expressions.
  SymExpr substitute(const std::map<std::string, SymExpr>& replacements) const;

  /// Stable infix text: "s77", "64*s28*s98", "s0 + 1", "floordiv(s0, 2)", "ceil(s0/2)", "max(1, s0)".
  std::string to_string() const;
  /// Structural equality (after the canonical ordering make() applies).
  bool operator==(const SymExpr& other) const;
  bool operator!=(const SymExpr& other) const { return !(*this == other); }
  size_t hash() const;

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  static SymExpr floordiv(const SymExpr& a, const SymExpr& b);
  static SymExpr ceildiv(const SymExpr& a, const SymExpr& b);
  static SymExpr mod(const SymExpr& a, const SymExpr& b);
  static SymExpr max(const SymExpr& a, const SymExpr& b);
  static SymExpr min(const SymExpr& a, const SymExpr& b);

  /// The representation (defined in src/ir; internal to the IR layer).
  struct Rep;
  /// Wraps a representation as is, without canonicalization (internal to the IR layer).
  static SymExpr from_rep(std::shared_ptr<const Rep> rep);

 private:
  explicit SymExpr(std::shared_ptr<const Rep> rep);
  std::shared_ptr<const Rep> rep_;
};

}  // namespace kiln::ir
