// digamma / special_digamma / special_psi against libtorch eager: on (0.05, 6) and [6, 80) (the shifted and
// the direct asymptotic ranges), on negative non-integers (the reflection) with a dynamic batch, and at the
// poles and infinities (0, negative integers, +-inf, NaN). Tolerance: rtol 1e-4 and atol 1e-5 (the harness
// default) except on the reflection case, atol 1e-4: the series truncate below 1e-11, the rest is float
// rounding, but near a pole tan(pi x) of a rounded x carries ~1e-7 relative error that the reflection turns
// into ~1e-5 absolute.

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase ranged(const std::string& name, const std::string& op, double lo, double hi, double atol = 1e-5) {
  NamedCase c;
  c.name = name;
  c.c.ir = one_op("f32[s0, 64]", op + "(self=%x)", "f32[s0, 64]", "  symbol s0 in [1, 8] hint 2\n");
  c.c.runs = {{{3, 64}}, {{5, 64}}};
  c.c.fills[0] = {lo, hi};
  c.c.atol = atol;
  return c;
}

NamedCase edges(const std::string& name, const std::string& op) {
  NamedCase c;
  c.name = name;
  c.c.ir =
      "graph(%x: f32[9]) {\n"
      "  %c: f32[9] = constant(\"edges\", data=[0.0, 0.5, -1.0, -4.0, 1.0, 2.0, inf, -inf, nan])\n"
      "  %s: f32[9] = aten.add.Tensor(self=%c, other=%x, *, alpha=0)\n"
      "  %y: f32[9] = " +
      op + "(self=%s)\n  return (%y)\n}\n";
  return c;
}

CaseList gamma_cases() {
  return {
      ranged("digamma_shifted", "aten.digamma.default", 0.05, 6.0),
      ranged("digamma_asymptotic", "aten.digamma.default", 6.0, 80.0),
      ranged("digamma_reflection", "aten.digamma.default", -6.0, 0.0, 1e-4),
      ranged("special_psi", "aten.special_psi.default", 0.5, 4.0),
      ranged("special_digamma", "aten.special_digamma.default", 0.5, 4.0),
      edges("digamma_edges", "aten.digamma.default"),
  };
}

KILN_CONVERTER_CASES(Gamma, gamma_cases);

}  // namespace
}  // namespace kiln::conversion::testing
