// SymExpr construction and canonicalization: make() flattens, folds constants, combines like terms and
// sorts operands so that structurally equal expressions compare equal.

#include "kiln/ir/sym_expr.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "kiln/ir/identifier.h"
#include "kiln/support/error.h"
#include "sym_expr_internal.h"

namespace kiln::ir {

using symdetail::Q;

namespace {

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

SymExpr raw(SymExpr::Kind kind, std::vector<SymExpr> ops) {
  auto rep = std::make_shared<SymExpr::Rep>();
  rep->kind = kind;
  size_t h = mix(0, static_cast<size_t>(kind) + 1);
  for (const auto& op : ops) h = mix(h, op.hash());
  rep->hash = h;
  rep->ops = std::move(ops);
  return SymExpr::from_rep(std::move(rep));
}

SymExpr raw_const(int64_t n, int64_t d) {
  auto rep = std::make_shared<SymExpr::Rep>();
  rep->kind = d == 1 ? SymExpr::Kind::Integer : SymExpr::Kind::Rational;
  rep->num = n;
  rep->den = d;
  rep->hash = mix(mix(static_cast<size_t>(rep->kind) + 1, std::hash<int64_t>()(n)), std::hash<int64_t>()(d));
  return SymExpr::from_rep(std::move(rep));
}

const SymExpr& zero() {
  static const SymExpr z = raw_const(0, 1);
  return z;
}

bool is_q(const SymExpr& e, Q* q = nullptr) {
  Q tmp;
  bool ok = symdetail::as_q(e, &tmp);
  if (ok && q) *q = tmp;
  return ok;
}

bool is_int_const(const SymExpr& e, int64_t v) {
  return e.kind() == SymExpr::Kind::Integer && *e.as_int() == v;
}

void sort_ops(std::vector<SymExpr>& ops) {
  std::stable_sort(ops.begin(), ops.end(),
                   [](const SymExpr& a, const SymExpr& b) { return symdetail::compare(a, b) < 0; });
}

// Splits an Add term into coefficient and the remaining product (null rest for a constant).
std::pair<Q, std::optional<SymExpr>> split_coeff(const SymExpr& t) {
  Q q;
  if (is_q(t, &q)) return {q, std::nullopt};
  if (t.kind() == SymExpr::Kind::Mul && is_q(t.operands()[0], &q)) {
    std::vector<SymExpr> rest(t.operands().begin() + 1, t.operands().end());
    if (rest.size() == 1) return {q, rest[0]};
    return {q, raw(SymExpr::Kind::Mul, std::move(rest))};
  }
  return {Q{1, 1}, t};
}

SymExpr make_add(std::vector<SymExpr> in) {
  std::vector<SymExpr> flat;
  for (auto& e : in) {
    if (e.kind() == SymExpr::Kind::Add) {
      flat.insert(flat.end(), e.operands().begin(), e.operands().end());
    } else {
      flat.push_back(std::move(e));
    }
  }
  Q constant{0, 1};
  std::vector<std::pair<SymExpr, Q>> terms;
  for (const auto& e : flat) {
    auto [q, rest] = split_coeff(e);
    if (!rest) {
      constant = symdetail::q_add(constant, q);
      continue;
    }
    terms.emplace_back(*rest, q);
  }
  std::stable_sort(terms.begin(), terms.end(),
                   [](const auto& a, const auto& b) { return symdetail::compare(a.first, b.first) < 0; });
  std::vector<SymExpr> out;
  for (size_t i = 0; i < terms.size();) {
    Q c = terms[i].second;
    size_t j = i + 1;
    while (j < terms.size() && terms[j].first == terms[i].first) c = symdetail::q_add(c, terms[j++].second);
    if (c.n != 0) {
      if (c == Q{1, 1}) {
        out.push_back(terms[i].first);
      } else {
        std::vector<SymExpr> factors{symdetail::from_q(c)};
        if (terms[i].first.kind() == SymExpr::Kind::Mul) {
          factors.insert(factors.end(), terms[i].first.operands().begin(), terms[i].first.operands().end());
        } else {
          factors.push_back(terms[i].first);
        }
        out.push_back(raw(SymExpr::Kind::Mul, std::move(factors)));
      }
    }
    i = j;
  }
  if (constant.n != 0) out.push_back(symdetail::from_q(constant));
  if (out.empty()) return zero();
  if (out.size() == 1) return out[0];
  sort_ops(out);
  return raw(SymExpr::Kind::Add, std::move(out));
}

SymExpr make_pow(const SymExpr& base, const SymExpr& exp);

SymExpr make_mul(std::vector<SymExpr> in) {
  std::vector<SymExpr> flat;
  for (auto& e : in) {
    if (e.kind() == SymExpr::Kind::Mul) {
      flat.insert(flat.end(), e.operands().begin(), e.operands().end());
    } else {
      flat.push_back(std::move(e));
    }
  }
  Q coeff{1, 1};
  // Factors as (base, integer exponent); non-integer exponents stay whole (exponent 1).
  std::vector<std::pair<SymExpr, int64_t>> factors;
  for (const auto& e : flat) {
    Q q;
    if (is_q(e, &q)) {
      coeff = symdetail::q_mul(coeff, q);
      continue;
    }
    if (e.kind() == SymExpr::Kind::Pow && e.operands()[1].kind() == SymExpr::Kind::Integer) {
      factors.emplace_back(e.operands()[0], *e.operands()[1].as_int());
    } else {
      factors.emplace_back(e, 1);
    }
  }
  if (coeff.n == 0) return zero();
  std::stable_sort(factors.begin(), factors.end(),
                   [](const auto& a, const auto& b) { return symdetail::compare(a.first, b.first) < 0; });
  std::vector<SymExpr> out;
  for (size_t i = 0; i < factors.size();) {
    int64_t exp = factors[i].second;
    size_t j = i + 1;
    while (j < factors.size() && factors[j].first == factors[i].first) {
      KILN_CHECK(!__builtin_add_overflow(exp, factors[j].second, &exp), InvalidInput,
                 "integer overflow in symbolic exponent");
      ++j;
    }
    if (exp == 1) {
      out.push_back(factors[i].first);
    } else if (exp != 0) {
      out.push_back(raw(SymExpr::Kind::Pow, {factors[i].first, raw_const(exp, 1)}));
    }
    i = j;
  }
  if (out.empty()) return symdetail::from_q(coeff);
  // A number times a sum distributes, as sympy does: 2*(s0 + 1) == 2*s0 + 2.
  if (out.size() == 1 && out[0].kind() == SymExpr::Kind::Add && !(coeff == Q{1, 1})) {
    std::vector<SymExpr> terms;
    for (const auto& t : out[0].operands()) terms.push_back(make_mul({symdetail::from_q(coeff), t}));
    return make_add(std::move(terms));
  }
  if (out.size() == 1 && coeff == Q{1, 1}) return out[0];
  sort_ops(out);
  if (!(coeff == Q{1, 1})) out.insert(out.begin(), symdetail::from_q(coeff));
  return raw(SymExpr::Kind::Mul, std::move(out));
}

SymExpr make_pow(const SymExpr& base, const SymExpr& exp) {
  if (exp.kind() == SymExpr::Kind::Integer) {
    int64_t e = *exp.as_int();
    if (e == 0) return SymExpr(1);
    if (e == 1) return base;
    Q b;
    if (is_q(base, &b)) return symdetail::from_q(symdetail::q_pow(b, e));
    if (base.kind() == SymExpr::Kind::Pow && base.operands()[1].kind() == SymExpr::Kind::Integer) {
      int64_t inner = *base.operands()[1].as_int();
      int64_t prod;
      KILN_CHECK(!__builtin_mul_overflow(inner, e, &prod), InvalidInput,
                 "integer overflow in symbolic exponent");
      return make_pow(base.operands()[0], SymExpr(prod));
    }
    if (base.kind() == SymExpr::Kind::Mul) {
      std::vector<SymExpr> factors;
      for (const auto& f : base.operands()) factors.push_back(make_pow(f, exp));
      return make_mul(std::move(factors));
    }
    return raw(SymExpr::Kind::Pow, {base, exp});
  }
  if (is_int_const(base, 1)) return SymExpr(1);
  return raw(SymExpr::Kind::Pow, {base, exp});
}

// Splits the integer-valued terms of `a` whose coefficients are multiples of `c` from the others.
void split_divisible(const SymExpr& a, int64_t c, std::vector<SymExpr>* divisible,
                     std::vector<SymExpr>* rest) {
  std::vector<SymExpr> terms;
  if (a.kind() == SymExpr::Kind::Add) {
    terms = a.operands();
  } else {
    terms.push_back(a);
  }
  for (const auto& t : terms) {
    auto [q, r] = split_coeff(t);
    bool ok = q.is_int() && q.n % c == 0 && (!r || symdetail::is_integer_valued(*r));
    (ok ? divisible : rest)->push_back(t);
  }
}

SymExpr make_floordiv(const SymExpr& a, const SymExpr& b) {
  Q qa, qb;
  bool ca = is_q(a, &qa), cb = is_q(b, &qb);
  if (cb) KILN_CHECK(qb.n != 0, InvalidInput, "division by zero in floordiv(", a.to_string(), ", 0)");
  if (ca && cb) return SymExpr(symdetail::q_floor(symdetail::q_div(qa, qb)));
  if (ca && qa.n == 0) return zero();
  if (cb && qb == Q{1, 1} && symdetail::is_integer_valued(a)) return a;
  if (cb && qb.is_int() && qb.n > 0) {
    int64_t c = qb.n;
    if (a.kind() == SymExpr::Kind::FloorDiv && a.operands()[1].kind() == SymExpr::Kind::Integer &&
        *a.operands()[1].as_int() > 0) {
      int64_t prod;
      if (!__builtin_mul_overflow(c, *a.operands()[1].as_int(), &prod)) {
        return make_floordiv(a.operands()[0], SymExpr(prod));
      }
    }
    if (symdetail::is_integer_valued(a)) {
      std::vector<SymExpr> divisible, rest;
      split_divisible(a, c, &divisible, &rest);
      if (!divisible.empty()) {
        SymExpr d = make_mul({make_add(std::move(divisible)), SymExpr::rational(1, c)});
        if (rest.empty()) return d;
        return make_add({d, make_floordiv(make_add(std::move(rest)), b)});
      }
    }
  }
  return raw(SymExpr::Kind::FloorDiv, {a, b});
}

SymExpr make_mod(const SymExpr& a, const SymExpr& b) {
  Q qa, qb;
  bool ca = is_q(a, &qa), cb = is_q(b, &qb);
  if (cb) KILN_CHECK(qb.n != 0, InvalidInput, "division by zero in mod(", a.to_string(), ", 0)");
  if (ca && cb) return symdetail::from_q(symdetail::q_mod(qa, qb));
  if (ca && qa.n == 0) return zero();
  if (cb && qb.is_int() && qb.n > 0 && symdetail::is_integer_valued(a)) {
    if (qb.n == 1) return zero();
    std::vector<SymExpr> divisible, rest;
    split_divisible(a, qb.n, &divisible, &rest);
    if (!divisible.empty()) return make_mod(make_add(std::move(rest)), b);
  }
  return raw(SymExpr::Kind::Mod, {a, b});
}

SymExpr make_minmax(SymExpr::Kind kind, std::vector<SymExpr> in) {
  std::vector<SymExpr> flat;
  for (auto& e : in) {
    if (e.kind() == kind) {
      flat.insert(flat.end(), e.operands().begin(), e.operands().end());
    } else {
      flat.push_back(std::move(e));
    }
  }
  KILN_CHECK(!flat.empty(), InvalidInput, "max/min of no operands");
  std::optional<Q> best;
  std::vector<SymExpr> out;
  for (const auto& e : flat) {
    Q q;
    if (is_q(e, &q)) {
      if (!best) {
        best = q;
      } else {
        int c = symdetail::q_cmp(q, *best);
        if ((kind == SymExpr::Kind::Max && c > 0) || (kind == SymExpr::Kind::Min && c < 0)) best = q;
      }
    } else {
      out.push_back(e);
    }
  }
  sort_ops(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (best) out.insert(out.begin(), symdetail::from_q(*best));
  if (out.size() == 1) return out[0];
  return raw(kind, std::move(out));
}

void check_arity(SymExpr::Kind kind, size_t n, size_t want) {
  KILN_CHECK(n == want, InvalidInput, "symbolic operation ", static_cast<int>(kind), " takes ", want,
             " operands, got ", n);
}

}  // namespace

// --- symdetail ----------------------------------------------------------------------------------------

namespace symdetail {

namespace {
__int128 gcd128(__int128 a, __int128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}
constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
constexpr __int128 kMin = std::numeric_limits<int64_t>::min();
}  // namespace

Q q_make(__int128 n, __int128 d) {
  KILN_CHECK(d != 0, InvalidInput, "division by zero in symbolic expression");
  if (d < 0) {
    n = -n;
    d = -d;
  }
  __int128 g = gcd128(n, d);
  if (g > 1) {
    n /= g;
    d /= g;
  }
  KILN_CHECK(n >= kMin && n <= kMax && d <= kMax, InvalidInput, "integer overflow in symbolic expression");
  return Q{static_cast<int64_t>(n), static_cast<int64_t>(d)};
}

Q q_add(Q a, Q b) {
  if (a.d == 1 && b.d == 1) return q_make(static_cast<__int128>(a.n) + b.n, 1);
  // n/d with d up to 2^126 can overflow __int128 only for pathological inputs; reduce by the gcd first.
  __int128 g = gcd128(a.d, b.d);
  __int128 da = a.d / g, db = b.d / g;
  __int128 n = static_cast<__int128>(a.n) * db + static_cast<__int128>(b.n) * da;
  return q_make(n, da * b.d);
}
Q q_sub(Q a, Q b) {
  KILN_CHECK(b.n != std::numeric_limits<int64_t>::min(), InvalidInput,
             "integer overflow in symbolic expression");
  return q_add(a, Q{-b.n, b.d});
}
Q q_mul(Q a, Q b) {
  __int128 g1 = gcd128(a.n, b.d), g2 = gcd128(b.n, a.d);
  if (g1 == 0) g1 = 1;
  if (g2 == 0) g2 = 1;
  return q_make((a.n / g1) * static_cast<__int128>(b.n / g2), (a.d / g2) * static_cast<__int128>(b.d / g1));
}
Q q_div(Q a, Q b) {
  KILN_CHECK(b.n != 0, InvalidInput, "division by zero in symbolic expression");
  return q_mul(a, q_make(b.d, b.n));
}
Q q_pow(Q a, int64_t e) {
  // The exponent's magnitude as unsigned: -INT64_MIN does not fit in int64.
  uint64_t m = e < 0 ? uint64_t{0} - static_cast<uint64_t>(e) : static_cast<uint64_t>(e);
  if (e < 0) {
    KILN_CHECK(a.n != 0, InvalidInput, "division by zero: 0 raised to a negative power");
    a = q_make(a.d, a.n);
  }
  Q r{1, 1};
  Q base = a;
  while (m > 0) {
    if (m & 1) r = q_mul(r, base);
    m >>= 1;
    if (m > 0) base = q_mul(base, base);
  }
  return r;
}
int64_t q_floor(Q a) {
  int64_t q = a.n / a.d;
  if (a.n % a.d != 0 && a.n < 0) --q;
  return q;
}
int64_t q_ceil(Q a) {
  int64_t q = a.n / a.d;
  if (a.n % a.d != 0 && a.n > 0) ++q;
  return q;
}
Q q_mod(Q a, Q b) { return q_sub(a, q_mul(b, Q{q_floor(q_div(a, b)), 1})); }
int q_cmp(Q a, Q b) {
  __int128 l = static_cast<__int128>(a.n) * b.d, r = static_cast<__int128>(b.n) * a.d;
  return l < r ? -1 : (l > r ? 1 : 0);
}

int compare(const SymExpr& a, const SymExpr& b) {
  if (a.kind() != b.kind()) return static_cast<int>(a.kind()) < static_cast<int>(b.kind()) ? -1 : 1;
  switch (a.kind()) {
    case SymExpr::Kind::Integer:
    case SymExpr::Kind::Rational: {
      int c = q_cmp(Q{a.numerator(), a.denominator()}, Q{b.numerator(), b.denominator()});
      if (c != 0) return c;
      return 0;
    }
    case SymExpr::Kind::Symbol: {
      int c = a.symbol_name().compare(b.symbol_name());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default: break;
  }
  const auto& x = a.operands();
  const auto& y = b.operands();
  if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
  for (size_t i = 0; i < x.size(); ++i) {
    int c = compare(x[i], y[i]);
    if (c != 0) return c;
  }
  return 0;
}

bool is_integer_valued(const SymExpr& e) {
  switch (e.kind()) {
    case SymExpr::Kind::Integer:
    case SymExpr::Kind::Symbol:
    case SymExpr::Kind::FloorDiv:
    case SymExpr::Kind::CeilToInt: return true;
    case SymExpr::Kind::Rational:
    case SymExpr::Kind::TrueDiv: return false;
    case SymExpr::Kind::Pow: {
      auto e2 = e.operands()[1].as_int();
      return e2 && *e2 >= 0 && is_integer_valued(e.operands()[0]);
    }
    case SymExpr::Kind::Add:
    case SymExpr::Kind::Mul:
    case SymExpr::Kind::Mod:
    case SymExpr::Kind::Max:
    case SymExpr::Kind::Min: return std::all_of(e.operands().begin(), e.operands().end(), is_integer_valued);
  }
  return false;
}

bool as_q(const SymExpr& e, Q* out) {
  if (e.kind() != SymExpr::Kind::Integer && e.kind() != SymExpr::Kind::Rational) return false;
  *out = Q{e.numerator(), e.denominator()};
  return true;
}

SymExpr from_q(Q q) { return raw_const(q.n, q.d); }

}  // namespace symdetail

// --- SymExpr ------------------------------------------------------------------------------------------

SymExpr::SymExpr() : rep_(zero().rep_) {}
SymExpr::SymExpr(int64_t value) : rep_(raw_const(value, 1).rep_) {}
SymExpr::SymExpr(std::shared_ptr<const Rep> rep) : rep_(std::move(rep)) {}
SymExpr SymExpr::from_rep(std::shared_ptr<const Rep> rep) { return SymExpr(std::move(rep)); }

SymExpr SymExpr::symbol(std::string name) {
  // Symbol names are identifiers, so that every expression prints as parseable infix text.
  KILN_CHECK(is_identifier(name), InvalidInput, "invalid symbol name '", name, "' (expected an identifier)");
  auto rep = std::make_shared<Rep>();
  rep->kind = Kind::Symbol;
  rep->hash = mix(static_cast<size_t>(Kind::Symbol) + 1, std::hash<std::string>()(name));
  rep->name = std::move(name);
  return SymExpr(std::move(rep));
}

SymExpr SymExpr::rational(int64_t numerator, int64_t denominator) {
  return symdetail::from_q(symdetail::q_make(numerator, denominator));
}

SymExpr SymExpr::make(Kind kind, std::vector<SymExpr> operands) {
  switch (kind) {
    case Kind::Integer:
    case Kind::Rational:
    case Kind::Symbol:
      KILN_FAIL(InvalidInput, "SymExpr::make cannot build a leaf; use the constant or symbol constructors");
    case Kind::Add: return make_add(std::move(operands));
    case Kind::Mul: return make_mul(std::move(operands));
    case Kind::Pow: check_arity(kind, operands.size(), 2); return make_pow(operands[0], operands[1]);
    case Kind::FloorDiv:
      check_arity(kind, operands.size(), 2);
      return make_floordiv(operands[0], operands[1]);
    case Kind::Mod: check_arity(kind, operands.size(), 2); return make_mod(operands[0], operands[1]);
    case Kind::CeilToInt: {
      check_arity(kind, operands.size(), 1);
      Q q;
      if (is_q(operands[0], &q)) return SymExpr(symdetail::q_ceil(q));
      if (symdetail::is_integer_valued(operands[0])) return operands[0];
      return raw(kind, std::move(operands));
    }
    case Kind::Max:
    case Kind::Min: return make_minmax(kind, std::move(operands));
    case Kind::TrueDiv: {
      check_arity(kind, operands.size(), 2);
      Q qb;
      if (is_q(operands[1], &qb)) {
        KILN_CHECK(qb.n != 0, InvalidInput, "division by zero in ", operands[0].to_string(), "/0");
        return make_mul({operands[0], symdetail::from_q(symdetail::q_div(Q{1, 1}, qb))});
      }
      if (operands[0] == operands[1]) return SymExpr(1);
      return raw(kind, std::move(operands));
    }
  }
  KILN_FAIL(InvalidInput, "unknown SymExpr kind ", static_cast<int>(kind));
}

SymExpr::Kind SymExpr::kind() const { return rep_->kind; }

std::optional<int64_t> SymExpr::as_int() const {
  if (rep_->kind != Kind::Integer) return std::nullopt;
  return rep_->num;
}

const std::string& SymExpr::symbol_name() const { return rep_->name; }

int64_t SymExpr::numerator() const {
  KILN_CHECK(rep_->kind == Kind::Integer || rep_->kind == Kind::Rational, InvalidInput,
             "numerator() of a non-constant expression ", to_string());
  return rep_->num;
}

int64_t SymExpr::denominator() const {
  KILN_CHECK(rep_->kind == Kind::Integer || rep_->kind == Kind::Rational, InvalidInput,
             "denominator() of a non-constant expression ", to_string());
  return rep_->den;
}

const std::vector<SymExpr>& SymExpr::operands() const { return rep_->ops; }

std::set<std::string> SymExpr::free_symbols() const {
  std::set<std::string> out;
  std::function<void(const SymExpr&)> walk = [&](const SymExpr& e) {
    if (e.kind() == Kind::Symbol) out.insert(e.symbol_name());
    for (const auto& op : e.operands()) walk(op);
  };
  walk(*this);
  return out;
}

bool SymExpr::operator==(const SymExpr& other) const {
  if (rep_ == other.rep_) return true;
  if (rep_->hash != other.rep_->hash) return false;
  return symdetail::compare(*this, other) == 0;
}

size_t SymExpr::hash() const { return rep_->hash; }

SymExpr operator+(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymExpr::Kind::Add, {a, b}); }
SymExpr operator-(const SymExpr& a, const SymExpr& b) {
  return SymExpr::make(SymExpr::Kind::Add, {a, SymExpr::make(SymExpr::Kind::Mul, {SymExpr(-1), b})});
}
SymExpr operator*(const SymExpr& a, const SymExpr& b) { return SymExpr::make(SymExpr::Kind::Mul, {a, b}); }
SymExpr SymExpr::floordiv(const SymExpr& a, const SymExpr& b) { return make(Kind::FloorDiv, {a, b}); }
SymExpr SymExpr::ceildiv(const SymExpr& a, const SymExpr& b) {
  return make(Kind::CeilToInt, {make(Kind::TrueDiv, {a, b})});
}
SymExpr SymExpr::mod(const SymExpr& a, const SymExpr& b) { return make(Kind::Mod, {a, b}); }
SymExpr SymExpr::max(const SymExpr& a, const SymExpr& b) { return make(Kind::Max, {a, b}); }
SymExpr SymExpr::min(const SymExpr& a, const SymExpr& b) { return make(Kind::Min, {a, b}); }

SymExpr SymExpr::substitute(const std::map<std::string, SymExpr>& replacements) const {
  if (kind() == Kind::Symbol) {
    auto it = replacements.find(symbol_name());
    return it == replacements.end() ? *this : it->second;
  }
  if (operands().empty()) return *this;
  std::vector<SymExpr> ops;
  ops.reserve(operands().size());
  for (const auto& op : operands()) ops.push_back(op.substitute(replacements));
  return make(kind(), std::move(ops));
}

}  // namespace kiln::ir
