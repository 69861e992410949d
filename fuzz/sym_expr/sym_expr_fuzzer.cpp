// libFuzzer target: the symbolic-expression parsers (ir SymExpr::parse_srepr, the sympy srepr form model.json
// holds, and SymExpr::parse, the infix form of IR text) on arbitrary text. A parsed expression is bounded
// under ranges, evaluated under bindings (both may reject, cleanly), and its printed form parses back to an
// equal expression.

#include <string_view>

#include "common/fuzz_check.h"
#include "kiln/ir/sym_expr.h"

namespace {

using kiln::ir::SymExpr;

void exercise(const SymExpr& e) {
  kiln::ir::SymBindings bindings;
  kiln::ir::SymRanges ranges;
  int64_t next = 1;
  for (const std::string& s : e.free_symbols()) {
    bindings[s] = next;
    ranges[s] = kiln::ir::SymRange{next, next * 64};
    next = next < (int64_t{1} << 40) ? next * 3 + 1 : 1;  // many symbols: start over, never overflow
  }
  kiln::fuzz::accepts([&] { e.bound(ranges); });
  kiln::fuzz::accepts([&] { e.evaluate(bindings); });
  kiln::fuzz::accepts([&] { e.substitute({}); });
  kiln::fuzz::invariant("to_string() parses back to an equal expression",
                        [&] { return SymExpr::parse(e.to_string()) == e; });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  SymExpr e;
  if (kiln::fuzz::accepts([&] { e = SymExpr::parse_srepr(text); })) exercise(e);
  if (kiln::fuzz::accepts([&] { e = SymExpr::parse(text); })) exercise(e);
  return 0;
}
