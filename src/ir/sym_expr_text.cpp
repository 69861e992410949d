// SymExpr text: the sympy srepr parser (what torch.export writes) and the infix printer/parser.

#include <cctype>
#include <limits>
#include <string>

#include "kiln/ir/sym_expr.h"
#include "kiln/support/error.h"
#include "sym_expr_internal.h"

namespace kiln::ir {

using K = SymExpr::Kind;

namespace {

// --- Shared lexer ----------------------------------------------------------------------------------

enum class Tok { End, Ident, Int, String, LParen, RParen, Comma, Equals, Plus, Minus, Star, StarStar, Slash };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  size_t pos = 0;
};

class Lexer {
 public:
  Lexer(std::string_view text, const char* what) : text_(text), what_(what) { advance(); }

  const Token& peek() const { return tok_; }
  Token take() {
    Token t = tok_;
    advance();
    return t;
  }
  bool accept(Tok k) {
    if (tok_.kind != k) return false;
    advance();
    return true;
  }
  Token expect(Tok k, const char* expected) {
    if (tok_.kind != k) fail(std::string("expected ") + expected);
    return take();
  }
  [[noreturn]] void fail(const std::string& why) const {
    std::string shown(text_.substr(0, 300));
    if (text_.size() > 300) shown += "...";
    KILN_FAIL(InvalidInput, "cannot parse ", what_, " '", shown, "': ", why, " at offset ", tok_.pos);
  }

 private:
  void advance() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    tok_ = Token{};
    tok_.pos = pos_;
    if (pos_ >= text_.size()) return;
    char c = text_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                     text_[pos_] == '_' || text_[pos_] == '.')) {
        ++pos_;
      }
      tok_.kind = Tok::Ident;
      tok_.text = std::string(text_.substr(start, pos_ - start));
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      tok_.kind = Tok::Int;
      tok_.text = std::string(text_.substr(start, pos_ - start));
      return;
    }
    if (c == '\'' || c == '"') {
      size_t start = ++pos_;
      while (pos_ < text_.size() && text_[pos_] != c) ++pos_;
      if (pos_ >= text_.size()) fail("unterminated string");
      tok_.kind = Tok::String;
      tok_.text = std::string(text_.substr(start, pos_ - start));
      ++pos_;
      return;
    }
    ++pos_;
    switch (c) {
      case '(': tok_.kind = Tok::LParen; return;
      case ')': tok_.kind = Tok::RParen; return;
      case ',': tok_.kind = Tok::Comma; return;
      case '=': tok_.kind = Tok::Equals; return;
      case '+': tok_.kind = Tok::Plus; return;
      case '-': tok_.kind = Tok::Minus; return;
      case '/': tok_.kind = Tok::Slash; return;
      case '*':
        if (pos_ < text_.size() && text_[pos_] == '*') {
          ++pos_;
          tok_.kind = Tok::StarStar;
        } else {
          tok_.kind = Tok::Star;
        }
        return;
      default: break;
    }
    fail(std::string("unexpected character '") + c + "'");
  }

  std::string_view text_;
  const char* what_;
  size_t pos_ = 0;
  Token tok_;
};

int64_t parse_int_literal(Lexer& lex, const Token& t, bool negative) {
  // Accumulate negatively so that INT64_MIN parses.
  int64_t v = 0;
  for (char c : t.text) {
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, c - '0', &v)) {
      lex.fail("integer literal " + t.text + " does not fit in 64 bits");
    }
  }
  if (!negative) {
    if (v == std::numeric_limits<int64_t>::min())
      lex.fail("integer literal " + t.text + " does not fit in 64 bits");
    v = -v;
  }
  return v;
}

// Bounds recursion so that hostile, deeply nested text fails with an error instead of exhausting the stack.
constexpr int kMaxDepth = 256;
struct DepthGuard {
  DepthGuard(int& depth, Lexer& lex) : depth_(depth) {
    if (++depth_ > kMaxDepth)
      lex.fail("expression nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  ~DepthGuard() { --depth_; }
  int& depth_;
};

SymExpr negate(const SymExpr& e) { return SymExpr::make(K::Mul, {SymExpr(-1), e}); }

// --- srepr ------------------------------------------------------------------------------------------

class SreprParser {
 public:
  explicit SreprParser(std::string_view text) : lex_(text, "sympy expression") {}

  SymExpr parse_all() {
    SymExpr e = parse_expr();
    if (lex_.peek().kind != Tok::End) lex_.fail("trailing text");
    return e;
  }

 private:
  int64_t parse_signed_int() {
    bool neg = lex_.accept(Tok::Minus);
    Token t = lex_.expect(Tok::Int, "an integer");
    return parse_int_literal(lex_, t, neg);
  }

  SymExpr parse_expr() {
    DepthGuard guard(depth_, lex_);
    if (lex_.accept(Tok::Minus)) {
      if (lex_.peek().kind == Tok::Int) {
        Token t = lex_.take();
        return SymExpr(parse_int_literal(lex_, t, true));
      }
      SymExpr e = parse_expr();
      if (e.kind() == K::Integer && *e.as_int() == SymRange::kUnbounded)
        return SymExpr(SymRange::kNegUnbounded);
      return negate(e);
    }
    if (lex_.peek().kind == Tok::Int) {
      Token t = lex_.take();
      return SymExpr(parse_int_literal(lex_, t, false));
    }
    Token head = lex_.expect(Tok::Ident, "a sympy head such as Integer, Symbol, Add or Mul");
    std::string name = head.text;
    if (name.rfind("sympy.", 0) == 0) name = name.substr(6);
    if (name == "oo" || name == "int_oo" || name == "S.Infinity" || name == "S.IntInfinity") {
      return SymExpr(SymRange::kUnbounded);
    }
    if (name == "Infinity" || name == "IntInfinity" || name == "NegativeInfinity" ||
        name == "NegativeIntInfinity" || name == "One" || name == "Zero" || name == "NegativeOne" ||
        name == "Half") {
      lex_.expect(Tok::LParen, "'('");
      lex_.expect(Tok::RParen, "')'");
      if (name == "Infinity" || name == "IntInfinity") return SymExpr(SymRange::kUnbounded);
      if (name == "NegativeInfinity" || name == "NegativeIntInfinity")
        return SymExpr(SymRange::kNegUnbounded);
      if (name == "One") return SymExpr(1);
      if (name == "Zero") return SymExpr(0);
      if (name == "NegativeOne") return SymExpr(-1);
      return SymExpr::rational(1, 2);
    }
    lex_.expect(Tok::LParen, ("'(' after " + name).c_str());
    if (name == "Integer") {
      int64_t v = parse_signed_int();
      skip_kwargs();
      lex_.expect(Tok::RParen, "')'");
      return SymExpr(v);
    }
    if (name == "Rational") {
      int64_t p = parse_signed_int();
      lex_.expect(Tok::Comma, "','");
      int64_t q = parse_signed_int();
      lex_.expect(Tok::RParen, "')'");
      if (q == 0) lex_.fail("zero denominator");
      return SymExpr::rational(p, q);
    }
    if (name == "Symbol") {
      Token t = lex_.expect(Tok::String, "a quoted symbol name");
      if (t.text.empty()) lex_.fail("empty symbol name");
      skip_kwargs();
      lex_.expect(Tok::RParen, "')'");
      try {
        return SymExpr::symbol(t.text);
      } catch (const Error& e) {
        lex_.fail(e.message());
      }
    }
    std::vector<SymExpr> args;
    if (lex_.peek().kind != Tok::RParen) {
      while (true) {
        if (is_kwarg()) {
          skip_kwarg();
        } else {
          args.push_back(parse_expr());
        }
        if (!lex_.accept(Tok::Comma)) break;
      }
    }
    lex_.expect(Tok::RParen, "')' or ','");
    return build(name, std::move(args));
  }

  bool is_kwarg() {
    // An identifier followed by '=' is a keyword argument; lookahead by copying the lexer.
    if (lex_.peek().kind != Tok::Ident) return false;
    Lexer copy = lex_;
    copy.take();
    return copy.peek().kind == Tok::Equals;
  }
  void skip_kwarg() {
    lex_.take();
    lex_.expect(Tok::Equals, "'='");
    lex_.accept(Tok::Minus);
    Token v = lex_.take();
    if (v.kind != Tok::Ident && v.kind != Tok::Int && v.kind != Tok::String)
      lex_.fail("expected a keyword value");
  }
  void skip_kwargs() {
    while (lex_.accept(Tok::Comma)) {
      if (!is_kwarg()) lex_.fail("expected a keyword argument");
      skip_kwarg();
    }
  }

  SymExpr build(const std::string& name, std::vector<SymExpr> a) {
    auto want = [&](size_t n) {
      if (a.size() != n)
        lex_.fail(name + " takes " + std::to_string(n) + " arguments, got " + std::to_string(a.size()));
    };
    if (name == "Add" || name == "Mul" || name == "Max" || name == "Min") {
      if (a.empty()) lex_.fail(name + " with no arguments");
      K k = name == "Add" ? K::Add : name == "Mul" ? K::Mul : name == "Max" ? K::Max : K::Min;
      return SymExpr::make(k, std::move(a));
    }
    if (name == "Pow" || name == "PowByNatural") {
      want(2);
      return SymExpr::make(K::Pow, std::move(a));
    }
    if (name == "FloorDiv" || name == "CleanDiv" || name == "IntDiv") {
      want(2);
      return SymExpr::floordiv(a[0], a[1]);
    }
    if (name == "CeilDiv") {
      want(2);
      return SymExpr::ceildiv(a[0], a[1]);
    }
    if (name == "ModularIndexing") {
      want(3);
      return SymExpr::mod(SymExpr::floordiv(a[0], a[1]), a[2]);
    }
    if (name == "Mod" || name == "PythonMod") {
      want(2);
      return SymExpr::mod(a[0], a[1]);
    }
    if (name == "CeilToInt" || name == "ceiling") {
      want(1);
      return SymExpr::make(K::CeilToInt, std::move(a));
    }
    if (name == "FloorToInt" || name == "floor") {
      want(1);
      return SymExpr::floordiv(a[0], 1);
    }
    if (name == "TrueDiv" || name == "IntTrueDiv" || name == "FloatTrueDiv") {
      want(2);
      return SymExpr::make(K::TrueDiv, std::move(a));
    }
    if (name == "Identity") {
      want(1);
      return a[0];
    }
    lex_.fail("unsupported sympy function '" + name + "'");
  }

  Lexer lex_;
  int depth_ = 0;
};

// --- Infix ------------------------------------------------------------------------------------------

class InfixParser {
 public:
  explicit InfixParser(std::string_view text) : lex_(text, "symbolic expression") {}

  SymExpr parse_all() {
    SymExpr e = parse_sum();
    if (lex_.peek().kind != Tok::End) lex_.fail("trailing text");
    return e;
  }

 private:
  SymExpr parse_sum() {
    std::vector<SymExpr> terms{parse_product()};
    while (true) {
      if (lex_.accept(Tok::Plus)) {
        terms.push_back(parse_product());
      } else if (lex_.accept(Tok::Minus)) {
        terms.push_back(negate(parse_product()));
      } else {
        break;
      }
    }
    return terms.size() == 1 ? terms[0] : SymExpr::make(K::Add, std::move(terms));
  }
  // A product is made from all its factors at once, as the printer's operands were: folding left to right
  // would distribute a leading number over a sum ("9*(s + 1)*t" as (9*s + 9)*t) where the printed Mul kept
  // 9, (s + 1) and t apart, and the text would not parse back to the expression it came from.
  SymExpr parse_product() {
    std::vector<SymExpr> factors;
    add_factors(factors);
    while (true) {
      if (lex_.accept(Tok::Star)) {
        add_factors(factors);
      } else if (lex_.accept(Tok::Slash)) {
        SymExpr divisor = parse_unary();
        factors = {SymExpr::make(K::TrueDiv, {SymExpr::make(K::Mul, std::move(factors)), divisor})};
      } else {
        return factors.size() == 1 ? factors[0] : SymExpr::make(K::Mul, std::move(factors));
      }
    }
  }
  // A factor with its sign: a unary minus is a factor -1 of the product ("-(s + 1)*t" is -1*(s + 1)*t).
  void add_factors(std::vector<SymExpr>& factors) {
    DepthGuard guard(depth_, lex_);
    if (lex_.accept(Tok::Minus)) {
      if (lex_.peek().kind == Tok::Int) {
        // A negative literal binds like Python's: -2**2 is -(2**2). Without a power it is read negative, so that
        // INT64_MIN (which to_string() prints) parses back.
        Token t = lex_.take();
        if (!lex_.accept(Tok::StarStar)) {
          factors.push_back(SymExpr(parse_int_literal(lex_, t, true)));
          return;
        }
        SymExpr base(parse_int_literal(lex_, t, false));
        factors.push_back(SymExpr(-1));
        factors.push_back(SymExpr::make(K::Pow, {base, parse_unary()}));
        return;
      }
      factors.push_back(SymExpr(-1));
      add_factors(factors);
      return;
    }
    SymExpr base = parse_atom();
    if (lex_.accept(Tok::StarStar)) base = SymExpr::make(K::Pow, {base, parse_unary()});
    factors.push_back(std::move(base));
  }
  // One signed factor alone: an exponent or a divisor.
  SymExpr parse_unary() {
    std::vector<SymExpr> factors;
    add_factors(factors);
    return factors.size() == 1 ? factors[0] : SymExpr::make(K::Mul, std::move(factors));
  }
  SymExpr parse_atom() {
    const Token& t = lex_.peek();
    if (t.kind == Tok::Int) {
      Token tok = lex_.take();
      return SymExpr(parse_int_literal(lex_, tok, false));
    }
    if (lex_.accept(Tok::LParen)) {
      SymExpr e = parse_sum();
      lex_.expect(Tok::RParen, "')'");
      return e;
    }
    if (t.kind != Tok::Ident) lex_.fail("expected a number, symbol, function or '('");
    Token id = lex_.take();
    if (!lex_.accept(Tok::LParen)) {
      if (id.text.find('.') != std::string::npos) lex_.fail("invalid symbol name '" + id.text + "'");
      return SymExpr::symbol(id.text);
    }
    std::vector<SymExpr> args;
    if (lex_.peek().kind != Tok::RParen) {
      args.push_back(parse_sum());
      while (lex_.accept(Tok::Comma)) args.push_back(parse_sum());
    }
    lex_.expect(Tok::RParen, "')' or ','");
    auto want = [&](size_t n) {
      if (args.size() != n) {
        lex_.fail(id.text + " takes " + std::to_string(n) + " arguments, got " + std::to_string(args.size()));
      }
    };
    if (id.text == "floordiv") {
      want(2);
      return SymExpr::floordiv(args[0], args[1]);
    }
    if (id.text == "mod") {
      want(2);
      return SymExpr::mod(args[0], args[1]);
    }
    if (id.text == "ceil") {
      want(1);
      return SymExpr::make(K::CeilToInt, std::move(args));
    }
    if (id.text == "max" || id.text == "min") {
      if (args.empty()) lex_.fail(id.text + " with no arguments");
      return SymExpr::make(id.text == "max" ? K::Max : K::Min, std::move(args));
    }
    lex_.fail("unknown function '" + id.text + "'");
  }

  Lexer lex_;
  int depth_ = 0;
};

// Precedence levels for printing: sums < products (and negative numbers) < powers < atoms.
constexpr int kPrecAdd = 1;
constexpr int kPrecMul = 2;
constexpr int kPrecMulRight = 3;  // the right operand of '*' or '/': anything at product level needs parens
constexpr int kPrecPow = 4;
constexpr int kPrecAtom = 5;

void print(const SymExpr& e, int ctx, std::string& out);

std::string str(const SymExpr& e, int ctx) {
  std::string s;
  print(e, ctx, s);
  return s;
}

// The numerator of a term's number (the term itself, or a product's leading coefficient); 1 when it has none.
int64_t term_numerator(const SymExpr& e) {
  if (e.kind() == K::Integer || e.kind() == K::Rational) return e.numerator();
  if (e.kind() == K::Mul && (e.operands()[0].kind() == K::Integer || e.operands()[0].kind() == K::Rational))
    return e.operands()[0].numerator();
  return 1;
}

void wrap(std::string body, int prec, int ctx, std::string& out) {
  if (prec < ctx) {
    out += "(" + body + ")";
  } else {
    out += body;
  }
}

void print(const SymExpr& e, int ctx, std::string& out) {
  switch (e.kind()) {
    case K::Integer: {
      int64_t v = e.numerator();
      wrap(std::to_string(v), v < 0 ? kPrecMul : kPrecAtom, ctx, out);
      return;
    }
    case K::Rational:
      wrap(std::to_string(e.numerator()) + "/" + std::to_string(e.denominator()), kPrecMul, ctx, out);
      return;
    case K::Symbol: out += e.symbol_name(); return;
    case K::Add: {
      std::string body;
      // Constants print last ("s0 + 1"); the canonical operand order keeps them first.
      std::vector<SymExpr> terms;
      for (const auto& t : e.operands()) {
        if (t.kind() != K::Integer && t.kind() != K::Rational) terms.push_back(t);
      }
      for (const auto& t : e.operands()) {
        if (t.kind() == K::Integer || t.kind() == K::Rational) terms.push_back(t);
      }
      for (size_t i = 0; i < terms.size(); ++i) {
        if (i == 0) {
          print(terms[i], kPrecAdd + 1, body);
        } else if (term_numerator(terms[i]) == std::numeric_limits<int64_t>::min()) {
          // INT64_MIN has no negation in int64 (a constant or a product's coefficient): printed as a negative
          // literal, which parses back.
          body += " + ";
          print(terms[i], kPrecAdd + 1, body);
        } else if (term_numerator(terms[i]) < 0) {
          body += " - ";
          print(negate(terms[i]), kPrecAdd + 1, body);
        } else {
          body += " + ";
          print(terms[i], kPrecAdd + 1, body);
        }
      }
      wrap(body, kPrecAdd, ctx, out);
      return;
    }
    case K::Mul: {
      const auto& ops = e.operands();
      int64_t p = 1, q = 1;
      size_t first = 0;
      if (ops[0].kind() == K::Integer || ops[0].kind() == K::Rational) {
        p = ops[0].numerator();
        q = ops[0].denominator();
        first = 1;
      }
      bool negative = p < 0;
      std::string body;
      if (negative) body += "-";
      bool any = false;
      if (p != 1 && p != -1) {
        std::string mag = std::to_string(p);
        body += negative ? mag.substr(1) : mag;
        any = true;
      }
      for (size_t i = first; i < ops.size(); ++i) {
        if (any) body += "*";
        print(ops[i], any ? kPrecMulRight : kPrecMul + 1, body);
        any = true;
      }
      if (q != 1) body += "/" + std::to_string(q);
      wrap(body, kPrecMul, ctx, out);
      return;
    }
    case K::Pow: {
      std::string body = str(e.operands()[0], kPrecAtom) + "**" + str(e.operands()[1], kPrecAtom);
      wrap(body, kPrecPow, ctx, out);
      return;
    }
    case K::TrueDiv: {
      std::string body = str(e.operands()[0], kPrecMul) + "/" + str(e.operands()[1], kPrecMulRight);
      wrap(body, kPrecMul, ctx, out);
      return;
    }
    default: break;
  }
  const char* fn = "";
  switch (e.kind()) {
    case K::FloorDiv: fn = "floordiv"; break;
    case K::Mod: fn = "mod"; break;
    case K::CeilToInt: fn = "ceil"; break;
    case K::Max: fn = "max"; break;
    case K::Min: fn = "min"; break;
    default: break;
  }
  out += fn;
  out += "(";
  for (size_t i = 0; i < e.operands().size(); ++i) {
    if (i) out += ", ";
    print(e.operands()[i], 0, out);
  }
  out += ")";
}

}  // namespace

SymExpr SymExpr::parse_srepr(std::string_view text) { return SreprParser(text).parse_all(); }
SymExpr SymExpr::parse(std::string_view text) { return InfixParser(text).parse_all(); }

std::string SymExpr::to_string() const {
  std::string out;
  print(*this, 0, out);
  return out;
}

}  // namespace kiln::ir
