// The IR text parser. Phase 1 reads the text into a small syntax tree (so that values may be referenced
// before the line that defines them, as a graph that is not topologically sorted prints); phase 2 builds the
// Graph and resolves argument kinds from the kinds of the values they name.

#include <cctype>
#include <cmath>
#include <cstring>

#include "kiln/ir/text.h"
#include "kiln/support/error.h"
#include "text_format.h"

namespace kiln::ir {

namespace {

struct Pos {
  size_t line = 1;
  size_t col = 1;
};

[[noreturn]] void fail_at(Pos p, const std::string& message) {
  KILN_FAIL(InvalidInput, "IR text line ", p.line, ", column ", p.col, ": ", message);
}

// One scalar inside an argument or a list.
struct Elem {
  enum Kind { None, Int, Float, Bool, Str, Ref } kind = None;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;  // string value or value name
  Pos pos;
};

struct GraphAst;

struct ArgAst {
  enum Kind { Scalar, List, SymConst, ScalarType, Layout, MemoryFormat, Device, Graph } kind = Scalar;
  enum ListPrefix { Plain, Optional, Sym, EmptyFloat, EmptyBool, EmptyStr, EmptyTensor } prefix = Plain;
  std::vector<Elem> elems;  // Scalar: exactly one
  int64_t code = 0;         // SymConst value, dtype/layout/memory format code
  ir::Device device;
  std::shared_ptr<GraphAst> graph;  // Graph: a nested graph block
  Pos pos;
};

struct TypeAst {
  ValueKind kind = ValueKind::Tensor;
  TensorMeta meta;
  std::optional<SymExpr> sym_value;
};

struct Decl {
  std::string name;
  TypeAst type;
  Pos pos;
};

struct NodeAst {
  std::string name;  // explicit "node NAME:" or empty
  Pos pos;
  std::vector<Decl> outputs;
  OpName target;
  std::vector<std::pair<NamedArgument, ArgAst>> args;  // NamedArgument holds the name and kwarg_only flag
  std::shared_ptr<GraphAst> subgraph;
};

struct ConstAst {
  Decl decl;
  ConstantKind kind = ConstantKind::Tensor;
  std::string fqn;
  bool has_data = false;
  std::vector<Elem> data;
  Pos data_pos;
};

struct GraphAst {
  std::vector<Decl> inputs;
  SymRanges ranges;
  std::map<std::string, int64_t> hints;
  std::vector<ConstAst> constants;
  std::vector<NodeAst> nodes;
  std::vector<std::pair<std::string, Pos>> outputs;  // empty name: None
};

class Parser {
 public:
  explicit Parser(std::string_view text) : t_(text) {}

  std::shared_ptr<GraphAst> parse_document() {
    skip_blank_lines();
    auto g = parse_graph_block();
    skip_blank_lines();
    if (i_ < t_.size()) fail("expected end of text after the graph's closing '}'");
    return g;
  }

 private:
  // --- Cursor -----------------------------------------------------------------------------------------
  Pos pos() const { return p_; }
  char peek(size_t k = 0) const { return i_ + k < t_.size() ? t_[i_ + k] : '\0'; }
  void bump() {
    if (t_[i_] == '\n') {
      ++p_.line;
      p_.col = 1;
    } else {
      ++p_.col;
    }
    ++i_;
  }
  std::string found() const {
    if (i_ >= t_.size()) return "end of text";
    if (t_[i_] == '\n') return "end of line";
    size_t n = 0;
    while (i_ + n < t_.size() && n < 12 && t_[i_ + n] != '\n') ++n;
    return "'" + std::string(t_.substr(i_, n)) + "'";
  }
  [[noreturn]] void fail(const std::string& expected) const { fail_at(p_, expected + ", found " + found()); }

  // Skips spaces, tabs and a comment, never a newline.
  void ws() {
    while (i_ < t_.size()) {
      char c = t_[i_];
      if (c == ' ' || c == '\t' || c == '\r') {
        bump();
      } else if (c == '#') {
        while (i_ < t_.size() && t_[i_] != '\n') bump();
      } else {
        break;
      }
    }
  }
  void skip_blank_lines() {
    while (true) {
      ws();
      if (peek() == '\n') {
        bump();
      } else {
        return;
      }
    }
  }
  void expect_eol() {
    ws();
    if (i_ >= t_.size()) return;
    if (peek() != '\n') fail("expected end of line");
    bump();
  }
  bool accept(char c) {
    ws();
    if (peek() != c) return false;
    bump();
    return true;
  }
  void expect(char c, const char* what) {
    if (!accept(c)) fail(std::string("expected ") + what);
  }
  static bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  }
  bool at_word(const char* w) {
    ws();
    size_t n = std::strlen(w);
    if (t_.substr(i_, n) != w) return false;
    return !ident_char(peek(n));
  }
  bool accept_word(const char* w) {
    if (!at_word(w)) return false;
    for (size_t k = 0; k < std::strlen(w); ++k) bump();
    return true;
  }
  std::string ident(const char* what) {
    ws();
    if (!ident_char(peek())) fail(std::string("expected ") + what);
    std::string out;
    while (ident_char(peek())) {
      out += peek();
      bump();
    }
    return out;
  }
  std::string string_literal() {
    ws();
    if (peek() != '"') fail("expected a double-quoted string");
    Pos start = p_;
    bump();
    std::string out;
    while (true) {
      if (i_ >= t_.size() || peek() == '\n') fail_at(start, "unterminated string");
      char c = peek();
      bump();
      if (c == '"') break;
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = peek();
      if (i_ >= t_.size()) fail_at(start, "unterminated string");
      bump();
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'x': {
          int v = 0;
          for (int k = 0; k < 2; ++k) {
            char h = peek();
            if (!std::isxdigit(static_cast<unsigned char>(h))) fail("expected two hex digits after \\x");
            v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : std::tolower(h) - 'a' + 10);
            bump();
          }
          out += static_cast<char>(v);
          break;
        }
        default: fail_at(p_, std::string("unknown escape '\\") + e + "' in string");
      }
    }
    return out;
  }
  std::string value_name() {
    ws();
    if (peek() != '%') fail("expected a value name like %x");
    bump();
    if (peek() == '"') return string_literal();
    if (!ident_char(peek())) fail("expected a value name after '%'");
    std::string out;
    while (ident_char(peek())) {
      out += peek();
      bump();
    }
    return out;
  }
  int64_t int_literal() {
    ws();
    Pos start = p_;
    bool neg = false;
    if (peek() == '-') {
      neg = true;
      bump();
    }
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected an integer");
    int64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, peek() - '0', &v)) {
        fail_at(start, "integer does not fit in 64 bits");
      }
      bump();
    }
    if (!neg) {
      if (v == std::numeric_limits<int64_t>::min()) fail_at(start, "integer does not fit in 64 bits");
      v = -v;
    }
    return v;
  }

  // Reads a number: an integer, or a float when it has '.', an exponent, or is inf / nan.
  Elem number() {
    ws();
    Elem e;
    e.pos = p_;
    size_t start = i_;
    size_t j = i_;
    if (j < t_.size() && (t_[j] == '-' || t_[j] == '+')) ++j;
    if (t_.substr(j, 3) == "inf" || t_.substr(j, 3) == "nan") {
      if (ident_char(j + 3 < t_.size() ? t_[j + 3] : '\0')) fail("expected a number");
      bool nan = t_.substr(j, 3) == "nan";
      bool neg = t_[start] == '-';
      while (i_ < j + 3) bump();
      e.kind = Elem::Float;
      e.f = nan ? std::nan("") : (neg ? -INFINITY : INFINITY);
      return e;
    }
    bool is_float = false;
    while (j < t_.size() &&
           (std::isdigit(static_cast<unsigned char>(t_[j])) || t_[j] == '.' || t_[j] == 'e' || t_[j] == 'E' ||
            ((t_[j] == '-' || t_[j] == '+') && (t_[j - 1] == 'e' || t_[j - 1] == 'E')))) {
      if (t_[j] == '.' || t_[j] == 'e' || t_[j] == 'E') is_float = true;
      ++j;
    }
    std::string text(t_.substr(start, j - start));
    if (text.empty() || text == "-" || text == "+") fail("expected a number");
    if (!is_float) {
      e.kind = Elem::Int;
      e.i = int_literal();
      return e;
    }
    char* end = nullptr;
    e.f = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) fail("malformed float '" + text + "'");
    e.kind = Elem::Float;
    while (i_ < j) bump();
    return e;
  }

  // --- Types ------------------------------------------------------------------------------------------
  // Reads the text of one expression up to a ',' / closer at depth 0 and parses it as a SymExpr.
  SymExpr expr_until(const char* closers) {
    ws();
    Pos start = p_;
    size_t begin = i_;
    int depth = 0;
    while (i_ < t_.size() && peek() != '\n') {
      char c = peek();
      if (depth == 0 && (c == ',' || std::strchr(closers, c))) break;
      if (c == '(') ++depth;
      if (c == ')') {
        if (depth == 0) break;
        --depth;
      }
      bump();
    }
    std::string_view text = t_.substr(begin, i_ - begin);
    try {
      return SymExpr::parse(text);
    } catch (const Error& e) {
      fail_at(start, "bad symbolic expression: " + e.message());
    }
  }
  std::vector<SymExpr> expr_list() {
    expect('[', "'['");
    std::vector<SymExpr> out;
    if (accept(']')) return out;
    while (true) {
      out.push_back(expr_until("]"));
      if (accept(']')) return out;
      expect(',', "',' or ']'");
    }
  }
  TypeAst type() {
    TypeAst t;
    ws();
    Pos start = p_;
    std::string word = ident("a type (f32[...], sym_int, sym_float, sym_bool, opaque)");
    if (word == "sym_int") {
      t.kind = ValueKind::SymInt;
      if (accept('(')) {
        t.sym_value = expr_until(")");
        expect(')', "')'");
      }
      return t;
    }
    if (word == "sym_float" || word == "sym_bool" || word == "opaque") {
      t.kind = word == "sym_float"  ? ValueKind::SymFloat
               : word == "sym_bool" ? ValueKind::SymBool
                                    : ValueKind::Opaque;
      return t;
    }
    auto dt = dtype_from_name(word);
    if (!dt) fail_at(start, "unknown type '" + word + "'");
    t.meta.dtype = *dt;
    t.meta.sizes = expr_list();
    if (accept('{')) {
      while (true) {
        std::string key = ident("strides=, offset= or requires_grad");
        if (key == "strides") {
          expect('=', "'='");
          t.meta.strides = expr_list();
          if (t.meta.strides.size() != t.meta.sizes.size()) fail("expected as many strides as sizes");
        } else if (key == "offset") {
          expect('=', "'='");
          t.meta.storage_offset = expr_until("}");
        } else if (key == "requires_grad") {
          t.meta.requires_grad = true;
        } else {
          fail("unknown tensor attribute '" + key + "'");
        }
        if (accept('}')) break;
        expect(',', "',' or '}'");
      }
    }
    if (peek() == '@') {
      bump();
      Pos dp = p_;
      std::string dev;
      while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == ':') {
        dev += peek();
        bump();
      }
      try {
        t.meta.device = Device::parse(dev);
      } catch (const Error& e) {
        fail_at(dp, e.message());
      }
    }
    return t;
  }
  Decl decl() {
    ws();
    Decl d;
    d.pos = p_;
    d.name = value_name();
    expect(':', "':' and a type");
    d.type = type();
    return d;
  }

  // --- Arguments --------------------------------------------------------------------------------------
  Elem scalar() {
    ws();
    Elem e;
    e.pos = p_;
    char c = peek();
    if (c == '%') {
      e.kind = Elem::Ref;
      e.s = value_name();
      return e;
    }
    if (c == '"') {
      e.kind = Elem::Str;
      e.s = string_literal();
      return e;
    }
    if (accept_word("None")) return e;
    if (accept_word("True")) {
      e.kind = Elem::Bool;
      e.b = true;
      return e;
    }
    if (accept_word("False")) {
      e.kind = Elem::Bool;
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.' || at_word("inf") ||
        at_word("nan")) {
      return number();
    }
    fail("expected an argument value");
  }
  std::vector<Elem> elem_list() {
    expect('[', "'['");
    std::vector<Elem> out;
    if (accept(']')) return out;
    while (true) {
      out.push_back(scalar());
      if (accept(']')) return out;
      expect(',', "',' or ']'");
    }
  }
  ArgAst argument() {
    ws();
    ArgAst a;
    a.pos = p_;
    if (peek() == '[') {
      a.kind = ArgAst::List;
      a.elems = elem_list();
      return a;
    }
    if (peek() == '?') {
      bump();
      a.kind = ArgAst::List;
      a.prefix = ArgAst::Optional;
      if (peek() != '[') fail("expected '[' after '?'");
      a.elems = elem_list();
      return a;
    }
    if (at_word("graph")) {
      a.kind = ArgAst::Graph;
      a.graph = parse_graph_block();
      return a;
    }
    if (std::isalpha(static_cast<unsigned char>(peek())) && !at_word("None") && !at_word("True") &&
        !at_word("False") && !at_word("inf") && !at_word("nan")) {
      std::string word = ident("an argument value");
      if (word == "sym") {
        if (peek() == '[') {
          a.kind = ArgAst::List;
          a.prefix = ArgAst::Sym;
          a.elems = elem_list();
          return a;
        }
        expect('(', "'(' or '[' after sym");
        a.kind = ArgAst::SymConst;
        a.code = int_literal();
        expect(')', "')'");
        return a;
      }
      if (word == "float" || word == "bool" || word == "str" || word == "tensor") {
        expect('[', "'[]'");
        expect(']', "']' (only empty lists take a type prefix)");
        a.kind = ArgAst::List;
        a.prefix = word == "float"  ? ArgAst::EmptyFloat
                   : word == "bool" ? ArgAst::EmptyBool
                   : word == "str"  ? ArgAst::EmptyStr
                                    : ArgAst::EmptyTensor;
        return a;
      }
      if (word == "device") {
        expect('(', "'(' after device");
        Pos sp = p_;
        std::string text = string_literal();
        try {
          a.device = Device::parse(text);
        } catch (const Error& e) {
          fail_at(sp, e.message());
        }
        expect(')', "')'");
        a.kind = ArgAst::Device;
        return a;
      }
      auto dot = word.find('.');
      std::string prefix = word.substr(0, dot), rest = dot == std::string::npos ? "" : word.substr(dot + 1);
      if (prefix == "dtype") {
        auto d = dtype_from_name(rest);
        if (!d) fail_at(a.pos, "unknown dtype '" + rest + "'");
        a.kind = ArgAst::ScalarType;
        a.code = static_cast<int64_t>(*d);
        return a;
      }
      if (prefix == "layout") {
        auto l = textfmt::layout_from_name(rest);
        if (!l) fail_at(a.pos, "unknown layout '" + rest + "'");
        a.kind = ArgAst::Layout;
        a.code = static_cast<int64_t>(*l);
        return a;
      }
      if (prefix == "memory_format") {
        auto m = textfmt::memory_format_from_name(rest);
        if (!m) fail_at(a.pos, "unknown memory format '" + rest + "'");
        a.kind = ArgAst::MemoryFormat;
        a.code = static_cast<int64_t>(*m);
        return a;
      }
      fail_at(a.pos, "unknown argument value '" + word + "'");
    }
    a.elems.push_back(scalar());
    return a;
  }

  // --- Lines ------------------------------------------------------------------------------------------
  std::shared_ptr<GraphAst> parse_graph_block() {
    // Bounds recursion so that hostile, deeply nested subgraphs fail with an error instead of a stack
    // overflow.
    if (++depth_ > 64) fail("subgraphs nested deeper than 64 levels");
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    auto g = std::make_shared<GraphAst>();
    if (!accept_word("graph")) fail("expected 'graph('");
    expect('(', "'('");
    if (!accept(')')) {
      while (true) {
        g->inputs.push_back(decl());
        if (accept(')')) break;
        expect(',', "',' or ')'");
      }
    }
    expect('{', "'{'");
    expect_eol();
    while (true) {
      skip_blank_lines();
      if (i_ >= t_.size()) fail("expected 'return (...)' and '}'");
      if (accept_word("symbol")) {
        symbol_line(*g);
        continue;
      }
      if (accept_word("return")) {
        expect('(', "'(' after return");
        if (!accept(')')) {
          while (true) {
            ws();
            Pos p = p_;
            if (accept_word("None")) {
              g->outputs.emplace_back("", p);
            } else {
              g->outputs.emplace_back(value_name(), p);
            }
            if (accept(')')) break;
            expect(',', "',' or ')'");
          }
        }
        expect_eol();
        skip_blank_lines();
        expect('}', "'}' after the return line");
        return g;
      }
      statement(*g);
    }
  }

  void symbol_line(GraphAst& g) {
    ws();
    Pos p = p_;
    std::string name = ident("a symbol name");
    if (name.find('.') != std::string::npos) fail_at(p, "invalid symbol name '" + name + "'");
    if (accept_word("in")) {
      expect('[', "'['");
      SymRange r;
      if (accept_word("-inf")) {
        r.min = SymRange::kNegUnbounded;
      } else {
        ws();
        if (peek() == '-' && t_.substr(i_, 4) == "-inf") {
          for (int k = 0; k < 4; ++k) bump();
          r.min = SymRange::kNegUnbounded;
        } else {
          r.min = int_literal();
        }
      }
      expect(',', "','");
      r.max = accept_word("inf") ? SymRange::kUnbounded : int_literal();
      expect(']', "']'");
      if (r.min > r.max) fail_at(p, "empty range for symbol '" + name + "'");
      g.ranges[name] = r;
    }
    if (accept_word("hint")) g.hints[name] = int_literal();
    expect_eol();
  }

  void statement(GraphAst& g) {
    ws();
    Pos start = p_;
    std::string node_name;
    if (accept_word("node")) {
      ws();
      node_name = peek() == '"' ? string_literal() : ident("a node name");
      expect(':', "':' after the node name");
    }
    std::vector<Decl> outs;
    ws();
    if (peek() != '=') {
      while (true) {
        outs.push_back(decl());
        if (!accept(',')) break;
      }
    }
    expect('=', "'=' (or ',' and another output)");
    ws();
    Pos call_pos = p_;
    std::string callee = ident("an operator name or parameter/buffer/constant");
    if (callee == "parameter" || callee == "buffer" || callee == "constant") {
      if (outs.size() != 1 || !node_name.empty()) fail_at(start, "a constant line defines exactly one value");
      if (outs[0].type.kind != ValueKind::Tensor) fail_at(outs[0].pos, "a constant must have a tensor type");
      ConstAst c;
      c.decl = outs[0];
      c.kind = callee == "parameter" ? ConstantKind::Parameter
               : callee == "buffer"  ? ConstantKind::Buffer
                                     : ConstantKind::Tensor;
      expect('(', "'('");
      c.fqn = string_literal();
      if (accept(',')) {
        ws();
        if (!accept_word("data")) fail("expected data=[...]");
        expect('=', "'='");
        ws();
        c.data_pos = p_;
        c.has_data = true;
        c.data = elem_list();
      }
      expect(')', "')'");
      expect_eol();
      g.constants.push_back(std::move(c));
      return;
    }
    NodeAst n;
    n.name = node_name;
    n.pos = start;
    n.outputs = std::move(outs);
    try {
      n.target = OpName::parse(callee);
    } catch (const Error& e) {
      fail_at(call_pos, e.message());
    }
    expect('(', "'(' after the operator name");
    bool kwarg_only = false;
    if (!accept(')')) {
      while (true) {
        if (accept('*')) {
          kwarg_only = true;
        } else {
          std::string arg_name = ident("an argument name");
          expect('=', "'=' after the argument name");
          ArgAst a = argument();
          n.args.emplace_back(NamedArgument{arg_name, Argument(), kwarg_only}, std::move(a));
        }
        if (accept(')')) break;
        expect(',', "',' or ')'");
      }
    }
    if (at_word("graph")) n.subgraph = parse_graph_block();
    expect_eol();
    g.nodes.push_back(std::move(n));
  }

  std::string_view t_;
  size_t i_ = 0;
  Pos p_;
  int depth_ = 0;
};

// --- Phase 2 ----------------------------------------------------------------------------------------

class Builder {
 public:
  std::unique_ptr<Graph> build(const GraphAst& ast) {
    auto g = std::make_unique<Graph>();
    g_ = g.get();
    for (const auto& d : ast.inputs) {
      guard(d.pos, [&] {
        Value* v = g_->add_input(d.name, d.type.kind, d.type.meta);
        v->set_sym_value(d.type.sym_value);
      });
    }
    g_->symbol_ranges() = ast.ranges;
    g_->symbol_hints() = ast.hints;
    for (const auto& c : ast.constants) {
      HostTensor data = c.has_data ? make_data(c) : HostTensor();
      guard(c.decl.pos, [&] {
        Value* v = g_->add_constant(c.decl.name, c.fqn, c.kind, data, c.decl.type.meta);
        v->set_meta(c.decl.type.meta);
      });
    }
    std::vector<Node*> nodes;
    for (const auto& n : ast.nodes) {
      std::vector<OutputSpec> specs;
      for (const auto& d : n.outputs) specs.push_back(OutputSpec{d.name, d.type.kind, d.type.meta});
      Node* node = nullptr;
      guard(n.pos, [&] {
        std::string name = n.name;
        // A node without an explicit name takes its first output's name, as the printer assumes.
        if (name.empty() && !n.outputs.empty()) name = n.outputs[0].name;
        node = g_->create_node(n.target, {}, std::move(specs), nullptr, name);
      });
      for (size_t i = 0; i < n.outputs.size(); ++i)
        node->output(i)->set_sym_value(n.outputs[i].type.sym_value);
      if (n.subgraph) node->set_subgraph(std::shared_ptr<Graph>(Builder().build(*n.subgraph)));
      nodes.push_back(node);
    }
    for (size_t k = 0; k < nodes.size(); ++k) {
      std::vector<NamedArgument> args;
      for (const auto& [named, a] : ast.nodes[k].args) {
        for (const auto& prev : args) {
          if (prev.name == named.name) fail_at(a.pos, "duplicate argument '" + named.name + "'");
        }
        args.push_back(NamedArgument{named.name, resolve(a), named.kwarg_only});
      }
      nodes[k]->set_args(std::move(args));
    }
    std::vector<Value*> outs;
    for (const auto& [name, p] : ast.outputs) outs.push_back(name.empty() ? nullptr : lookup(name, p));
    g_->set_outputs(std::move(outs));
    return g;
  }

 private:
  template <typename F>
  void guard(Pos p, F f) {
    try {
      f();
    } catch (const Error& e) {
      fail_at(p, e.message());
    }
  }

  Value* lookup(const std::string& name, Pos p) {
    Value* v = g_->find_value(name);
    if (!v) fail_at(p, "unknown value %" + name);
    return v;
  }

  HostTensor make_data(const ConstAst& c) {
    const TensorMeta& m = c.decl.type.meta;
    auto sizes = m.static_sizes();
    if (!sizes) fail_at(c.data_pos, "data=[...] needs a constant with static sizes");
    HostTensor t;
    guard(c.data_pos, [&] { t = HostTensor(m.dtype, *sizes); });
    if (static_cast<size_t>(t.numel()) != c.data.size()) {
      fail_at(c.data_pos, "data has " + std::to_string(c.data.size()) + " values but the type " +
                              m.to_string() + " holds " + std::to_string(t.numel()));
    }
    for (size_t i = 0; i < c.data.size(); ++i) {
      const Elem& e = c.data[i];
      if (m.dtype == DType::Bool) {
        if (e.kind != Elem::Bool) fail_at(e.pos, "expected True or False in bool data");
        t.mutable_data()[i] = e.b ? 1 : 0;
      } else if (is_floating(m.dtype)) {
        if (e.kind != Elem::Float && e.kind != Elem::Int) fail_at(e.pos, "expected a number in float data");
        double v = e.kind == Elem::Float ? e.f : static_cast<double>(e.i);
        if (m.dtype == DType::Float64) {
          std::memcpy(t.mutable_data() + i * 8, &v, 8);
        } else {
          // Through float first, so that f16/bf16 values printed as their float value read back exactly.
          t.set_from_double(static_cast<int64_t>(i), static_cast<float>(v));
        }
      } else {
        if (e.kind != Elem::Int) fail_at(e.pos, "expected an integer in integer data");
        if (m.dtype == DType::Int64) {
          std::memcpy(t.mutable_data() + i * 8, &e.i, 8);
        } else {
          t.set_from_double(static_cast<int64_t>(i), static_cast<double>(e.i));
        }
      }
    }
    return t;
  }

  Argument scalar_arg(const Elem& e) {
    switch (e.kind) {
      case Elem::None: return Argument::none();
      case Elem::Int: return Argument::int_(e.i);
      case Elem::Float: return Argument::float_(e.f);
      case Elem::Bool: return Argument::bool_(e.b);
      case Elem::Str: return Argument::string(e.s);
      case Elem::Ref: {
        Value* v = lookup(e.s, e.pos);
        switch (v->kind()) {
          case ValueKind::Tensor:
          case ValueKind::Opaque: return Argument::tensor(v);
          case ValueKind::SymInt: return Argument::sym_int(SymIntArg{v, 0});
          case ValueKind::SymFloat: return Argument::sym_float(v);
          case ValueKind::SymBool: return Argument::sym_bool(v);
        }
      }
    }
    fail_at(e.pos, "bad argument");
  }

  Argument resolve(const ArgAst& a) {
    switch (a.kind) {
      case ArgAst::Scalar: return scalar_arg(a.elems[0]);
      case ArgAst::SymConst: return Argument::sym_int(SymIntArg{nullptr, a.code});
      case ArgAst::ScalarType: return Argument::scalar_type(static_cast<DType>(a.code));
      case ArgAst::Layout: return Argument::layout(static_cast<Layout>(a.code));
      case ArgAst::MemoryFormat: return Argument::memory_format(static_cast<MemoryFormat>(a.code));
      case ArgAst::Device: return Argument::device(a.device);
      case ArgAst::Graph: return Argument::graph(std::shared_ptr<const Graph>(Builder().build(*a.graph)));
      case ArgAst::List: break;
    }
    switch (a.prefix) {
      case ArgAst::EmptyFloat: return Argument::floats({});
      case ArgAst::EmptyBool: return Argument::bools({});
      case ArgAst::EmptyStr: return Argument::strings({});
      case ArgAst::EmptyTensor: return Argument::tensors({});
      case ArgAst::Optional: {
        std::vector<Value*> vs;
        for (const auto& e : a.elems) {
          if (e.kind == Elem::None) {
            vs.push_back(nullptr);
            continue;
          }
          if (e.kind != Elem::Ref)
            fail_at(e.pos, "expected a tensor value or None in an optional tensor list");
          vs.push_back(tensor_ref(e));
        }
        return Argument::optional_tensors(std::move(vs));
      }
      case ArgAst::Sym: return sym_ints(a);
      case ArgAst::Plain: break;
    }
    if (a.elems.empty()) return Argument::ints({});
    bool any_float = false, any_ref = false, all_bool = true, all_str = true;
    for (const auto& e : a.elems) {
      any_float |= e.kind == Elem::Float;
      any_ref |= e.kind == Elem::Ref;
      all_bool &= e.kind == Elem::Bool;
      all_str &= e.kind == Elem::Str;
      if (e.kind == Elem::None) fail_at(e.pos, "None in a list: write an optional tensor list as ?[...]");
    }
    for (const auto& e : a.elems) {
      bool str = e.kind == Elem::Str, b = e.kind == Elem::Bool;
      if ((str && !all_str) || (b && !all_bool) || (any_float && e.kind == Elem::Ref)) {
        fail_at(e.pos, "list mixes values of different kinds");
      }
    }
    if (all_bool) {
      std::vector<bool> vs;
      for (const auto& e : a.elems) vs.push_back(e.b);
      return Argument::bools(std::move(vs));
    }
    if (all_str) {
      std::vector<std::string> vs;
      for (const auto& e : a.elems) vs.push_back(e.s);
      return Argument::strings(std::move(vs));
    }
    if (any_ref) {
      bool sym = false;
      for (const auto& e : a.elems) {
        if (e.kind == Elem::Int) sym = true;
        if (e.kind == Elem::Ref && lookup(e.s, e.pos)->kind() == ValueKind::SymInt) sym = true;
      }
      if (sym) return sym_ints(a);
      std::vector<Value*> vs;
      for (const auto& e : a.elems) {
        if (e.kind != Elem::Ref) fail_at(e.pos, "expected a tensor value in a tensor list");
        vs.push_back(tensor_ref(e));
      }
      return Argument::tensors(std::move(vs));
    }
    if (any_float) {
      std::vector<double> vs;
      for (const auto& e : a.elems) {
        if (e.kind != Elem::Float && e.kind != Elem::Int) fail_at(e.pos, "expected a number in a float list");
        vs.push_back(e.kind == Elem::Float ? e.f : static_cast<double>(e.i));
      }
      return Argument::floats(std::move(vs));
    }
    std::vector<int64_t> vs;
    for (const auto& e : a.elems) {
      if (e.kind != Elem::Int) fail_at(e.pos, "list mixes integers with other kinds of values");
      vs.push_back(e.i);
    }
    return Argument::ints(std::move(vs));
  }

  Value* tensor_ref(const Elem& e) {
    Value* v = lookup(e.s, e.pos);
    if (v->kind() != ValueKind::Tensor && v->kind() != ValueKind::Opaque) {
      fail_at(e.pos, "value %" + e.s + " is a " + to_string(v->kind()) + ", not a tensor");
    }
    return v;
  }

  Argument sym_ints(const ArgAst& a) {
    std::vector<SymIntArg> vs;
    for (const auto& e : a.elems) {
      if (e.kind == Elem::Int) {
        vs.push_back(SymIntArg{nullptr, e.i});
      } else if (e.kind == Elem::Ref) {
        Value* v = lookup(e.s, e.pos);
        if (v->kind() != ValueKind::SymInt) {
          fail_at(e.pos, "value %" + e.s + " is a " + to_string(v->kind()) + ", not a SymInt");
        }
        vs.push_back(SymIntArg{v, 0});
      } else {
        fail_at(e.pos, "expected an integer or a SymInt value in a SymInt list");
      }
    }
    return Argument::sym_ints(std::move(vs));
  }

  Graph* g_ = nullptr;
};

}  // namespace

std::unique_ptr<Graph> parse_graph(std::string_view text) {
  auto ast = Parser(text).parse_document();
  return Builder().build(*ast);
}

}  // namespace kiln::ir
