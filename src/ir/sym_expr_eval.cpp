// SymExpr evaluation (exact rational arithmetic, overflow-checked) and interval bounds.

#include <cmath>

#include "kiln/ir/sym_expr.h"
#include "kiln/support/error.h"
#include "sym_expr_internal.h"

namespace kiln::ir {

using symdetail::Q;

namespace {

Q eval_q(const SymExpr& e, const SymBindings& b) {
  using K = SymExpr::Kind;
  switch (e.kind()) {
    case K::Integer:
    case K::Rational: return Q{e.numerator(), e.denominator()};
    case K::Symbol: {
      auto it = b.find(e.symbol_name());
      KILN_CHECK(it != b.end(), InvalidInput, "unbound symbol '", e.symbol_name(), "' in ", e.to_string());
      return Q{it->second, 1};
    }
    default: break;
  }
  const auto& ops = e.operands();
  switch (e.kind()) {
    case K::Add: {
      Q r{0, 1};
      for (const auto& op : ops) r = symdetail::q_add(r, eval_q(op, b));
      return r;
    }
    case K::Mul: {
      Q r{1, 1};
      for (const auto& op : ops) r = symdetail::q_mul(r, eval_q(op, b));
      return r;
    }
    case K::Pow: {
      Q base = eval_q(ops[0], b), exp = eval_q(ops[1], b);
      KILN_CHECK(exp.is_int(), InvalidInput, "non-integer exponent in ", e.to_string());
      return symdetail::q_pow(base, exp.n);
    }
    case K::FloorDiv: {
      Q x = eval_q(ops[0], b), y = eval_q(ops[1], b);
      KILN_CHECK(y.n != 0, InvalidInput, "division by zero evaluating ", e.to_string());
      return Q{symdetail::q_floor(symdetail::q_div(x, y)), 1};
    }
    case K::CeilToInt: return Q{symdetail::q_ceil(eval_q(ops[0], b)), 1};
    case K::Mod: {
      Q x = eval_q(ops[0], b), y = eval_q(ops[1], b);
      KILN_CHECK(y.n != 0, InvalidInput, "modulo by zero evaluating ", e.to_string());
      return symdetail::q_mod(x, y);
    }
    case K::Max:
    case K::Min: {
      Q r = eval_q(ops[0], b);
      for (size_t i = 1; i < ops.size(); ++i) {
        Q v = eval_q(ops[i], b);
        int c = symdetail::q_cmp(v, r);
        if ((e.kind() == K::Max && c > 0) || (e.kind() == K::Min && c < 0)) r = v;
      }
      return r;
    }
    case K::TrueDiv: {
      Q x = eval_q(ops[0], b), y = eval_q(ops[1], b);
      KILN_CHECK(y.n != 0, InvalidInput, "division by zero evaluating ", e.to_string());
      return symdetail::q_div(x, y);
    }
    default: break;
  }
  KILN_FAIL(Internal, "unhandled SymExpr kind in evaluate");
}

// Interval arithmetic over long double with infinities; long double holds every int64 exactly.
using LD = long double;
constexpr LD kInf = std::numeric_limits<LD>::infinity();

struct Iv {
  LD lo, hi;
};

LD mul_ext(LD a, LD b) {
  if (a == 0 || b == 0) return 0;
  return a * b;
}

Iv iv_mul(Iv a, Iv b) {
  LD c[4] = {mul_ext(a.lo, b.lo), mul_ext(a.lo, b.hi), mul_ext(a.hi, b.lo), mul_ext(a.hi, b.hi)};
  Iv r{c[0], c[0]};
  for (LD v : c) {
    r.lo = std::min(r.lo, v);
    r.hi = std::max(r.hi, v);
  }
  return r;
}

Iv iv_recip(Iv a) {
  if (a.lo > 0 || a.hi < 0) {
    LD lo = std::isinf(a.hi) ? 0 : 1 / a.hi;
    LD hi = std::isinf(a.lo) ? 0 : 1 / a.lo;
    return Iv{lo, hi};
  }
  return Iv{-kInf, kInf};
}

Iv iv_pow(Iv a, int64_t n) {
  if (n == 0) return Iv{1, 1};
  // The magnitude as unsigned: -INT64_MIN does not fit in int64.
  const uint64_t m = n < 0 ? uint64_t{0} - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  auto p = [m](LD x) { return std::pow(x, static_cast<LD>(m)); };
  Iv r;
  if (m % 2 == 1 || a.lo >= 0) {
    r = Iv{p(a.lo), p(a.hi)};
  } else if (a.hi <= 0) {
    r = Iv{p(a.hi), p(a.lo)};
  } else {
    r = Iv{0, p(std::max(-a.lo, a.hi))};
  }
  return n < 0 ? iv_recip(r) : r;
}

Iv bound_iv(const SymExpr& e, const SymRanges& ranges, bool positive_default) {
  using K = SymExpr::Kind;
  switch (e.kind()) {
    case K::Integer:
    case K::Rational: {
      LD v = static_cast<LD>(e.numerator()) / static_cast<LD>(e.denominator());
      if (e.kind() == K::Integer) {
        // Constants that stand for infinity (parsed from sympy's oo) bound as infinity.
        if (e.numerator() >= SymRange::kUnbounded) v = kInf;
        if (e.numerator() <= SymRange::kNegUnbounded) v = -kInf;
      }
      return Iv{v, v};
    }
    case K::Symbol: {
      auto it = ranges.find(e.symbol_name());
      if (it == ranges.end()) return Iv{positive_default ? 1.0L : 0.0L, kInf};
      LD lo = it->second.min <= SymRange::kNegUnbounded ? -kInf : static_cast<LD>(it->second.min);
      LD hi = it->second.max >= SymRange::kUnbounded ? kInf : static_cast<LD>(it->second.max);
      return Iv{lo, hi};
    }
    default: break;
  }
  const auto& ops = e.operands();
  auto sub = [&](size_t i) { return bound_iv(ops[i], ranges, positive_default); };
  switch (e.kind()) {
    case K::Add: {
      Iv r{0, 0};
      for (size_t i = 0; i < ops.size(); ++i) {
        Iv v = sub(i);
        r.lo += v.lo;
        r.hi += v.hi;
      }
      if (std::isnan(r.lo)) r.lo = -kInf;
      if (std::isnan(r.hi)) r.hi = kInf;
      return r;
    }
    case K::Mul: {
      Iv r{1, 1};
      for (size_t i = 0; i < ops.size(); ++i) r = iv_mul(r, sub(i));
      return r;
    }
    case K::Pow: {
      auto n = ops[1].as_int();
      if (!n) return Iv{-kInf, kInf};
      return iv_pow(sub(0), *n);
    }
    case K::TrueDiv: return iv_mul(sub(0), iv_recip(sub(1)));
    case K::FloorDiv: {
      Iv q = iv_mul(sub(0), iv_recip(sub(1)));
      return Iv{std::floor(q.lo), std::floor(q.hi)};
    }
    case K::CeilToInt: {
      Iv v = sub(0);
      return Iv{std::ceil(v.lo), std::ceil(v.hi)};
    }
    case K::Mod: {
      Iv a = sub(0), b = sub(1);
      if (b.lo > 0) {
        if (b.lo == b.hi && !std::isinf(a.lo) && !std::isinf(a.hi)) {
          LD k = std::floor(a.lo / b.lo);
          if (std::floor(a.hi / b.lo) == k) return Iv{a.lo - k * b.lo, a.hi - k * b.lo};
        }
        LD hi = b.hi - 1;
        if (a.lo >= 0) hi = std::min(hi, a.hi);
        return Iv{0, hi};
      }
      if (b.hi < 0) return Iv{b.lo + 1, 0};
      LD m = std::max(-b.lo, b.hi) - 1;
      return Iv{-m, m};
    }
    case K::Max:
    case K::Min: {
      Iv r = sub(0);
      for (size_t i = 1; i < ops.size(); ++i) {
        Iv v = sub(i);
        if (e.kind() == K::Max) {
          r = Iv{std::max(r.lo, v.lo), std::max(r.hi, v.hi)};
        } else {
          r = Iv{std::min(r.lo, v.lo), std::min(r.hi, v.hi)};
        }
      }
      return r;
    }
    default: break;
  }
  return Iv{-kInf, kInf};
}

int64_t saturate(LD v) {
  if (std::isnan(v)) return SymRange::kUnbounded;
  if (v >= static_cast<LD>(SymRange::kUnbounded)) return SymRange::kUnbounded;
  if (v <= static_cast<LD>(SymRange::kNegUnbounded)) return SymRange::kNegUnbounded;
  return static_cast<int64_t>(v);
}

}  // namespace

int64_t SymExpr::evaluate(const SymBindings& bindings) const {
  Q q = eval_q(*this, bindings);
  KILN_CHECK(q.is_int(), InvalidInput, "expression ", to_string(), " evaluates to the non-integer ", q.n, "/",
             q.d);
  return q.n;
}

SymRange SymExpr::bound(const SymRanges& ranges, bool positive_default) const {
  Iv v = bound_iv(*this, ranges, positive_default);
  // The expression is integer-valued, so its bounds round inward.
  LD lo = std::isnan(v.lo) ? -kInf : std::ceil(v.lo);
  LD hi = std::isnan(v.hi) ? kInf : std::floor(v.hi);
  return SymRange{saturate(lo), saturate(hi)};
}

}  // namespace kiln::ir
