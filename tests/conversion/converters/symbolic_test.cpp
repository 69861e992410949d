// SymInt converters against libtorch eager: sym_size.int and Python integer arithmetic on SymInts, both as
// reshape targets and as segment outputs (Int64 [1] tensors in the engine, 0-d in the reference). Exact integer
// results; the harness tolerance is the default fp32 allclose(1e-4, 1e-5).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase symbolic_case(const std::string& name, const std::string& body) {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(%x: f32[s0, 4, 6]) {\n  symbol s0 in [1, 8] hint 2\n"
           "  %n: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)\n" + body + "}\n";
  c.c.runs = {{{2, 4, 6}}, {{7, 4, 6}}};
  return c;
}

CaseList symbolic_cases() {
  return {
      symbolic_case("sym_size_output", "  return (%n)\n"),
      symbolic_case("mul_floordiv_reshape",
                    "  %m: sym_int(24*s0) = _operator.mul(a=%n, b=24)\n"
                    "  %k: sym_int(6*s0) = _operator.floordiv(a=%m, b=4)\n"
                    "  %y: f32[6*s0, 4] = aten.reshape.default(self=%x, shape=[%k, 4])\n  return (%y, %k)\n"),
      symbolic_case("add_sub",
                    "  %a: sym_int(s0 + 3) = _operator.add(a=%n, b=3)\n"
                    "  %b: sym_int(s0 + 1) = _operator.sub(a=%a, b=2)\n  return (%a, %b)\n"),
      symbolic_case("mod", "  %a: sym_int = _operator.mod(a=%n, b=3)\n  return (%a)\n"),
  };
}

KILN_CONVERTER_CASES(Symbolic, symbolic_cases);

}  // namespace
}  // namespace kiln::conversion::testing
