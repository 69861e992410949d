// Unary math converters against libtorch eager on a dynamic batch (built once, run at two sizes), with input
// ranges inside each function's domain. Tolerance: the harness default fp32 allclose(1e-4, 1e-5).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase unary(const std::string& op, InputFill fill = {}, const std::string& out = "f32[s0, 7]",
                const std::string& in = "f32[s0, 7]") {
  NamedCase c;
  c.name = op;
  c.c.ir = one_op(in, "aten." + op + ".default(self=%x)", out, "  symbol s0 in [1, 8] hint 4\n");
  c.c.runs = {{{2, 7}}, {{6, 7}}};
  c.c.fills[0] = fill;
  return c;
}

CaseList unary_cases() {
  CaseList cases = {
      unary("exp", {-3, 3}),      unary("log", {0.1, 5}),    unary("sqrt", {0.01, 5}),   unary("rsqrt", {0.1, 5}),
      unary("reciprocal", {0.2, 3}), unary("erf"),           unary("sin", {-3, 3}),      unary("cos", {-3, 3}),
      unary("tan", {-1.2, 1.2}),  unary("asin", {-0.95, 0.95}), unary("acos", {-0.95, 0.95}), unary("atan", {-4, 4}),
      unary("sinh", {-2, 2}),     unary("cosh", {-2, 2}),    unary("floor", {-4, 4}),    unary("ceil", {-4, 4}),
      unary("round", {-4, 4}),    unary("expm1", {-2, 2}),   unary("log1p", {-0.5, 3}),  unary("abs"),
      unary("neg"),               unary("sign"),
      unary("isnan", {}, "bool[s0, 7]"), unary("isinf", {}, "bool[s0, 7]"),
  };
  NamedCase abs_int = unary("abs", {-9, 9}, "i64[s0, 7]", "i64[s0, 7]");
  abs_int.name = "abs_int";
  cases.push_back(abs_int);
  NamedCase neg_int = unary("neg", {-9, 9}, "i32[s0, 7]", "i32[s0, 7]");
  neg_int.name = "neg_int";
  cases.push_back(neg_int);
  NamedCase exp_int = unary("exp", {-3, 3}, "f32[s0, 7]", "i64[s0, 7]");
  exp_int.name = "exp_of_int";
  cases.push_back(exp_int);
  return cases;
}

KILN_CONVERTER_CASES(Unary, unary_cases);

}  // namespace
}  // namespace kiln::conversion::testing
