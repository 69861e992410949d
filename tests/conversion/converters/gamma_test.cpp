// digamma / special_digamma / special_psi against libtorch eager: on (0.05, 6) and [6, 80) (the shifted and
// the direct asymptotic ranges), on negative non-integers (the reflection) with a dynamic batch, and at the
// poles and infinities (0, negative integers, +-inf, NaN). Tolerance: rtol 1e-4 and atol 1e-5 (the harness
// default) except on the reflection case, atol 1e-4: the series truncate below 1e-11, the rest is float
// rounding, but near a pole tan(pi x) of a rounded x carries ~1e-7 relative error that the reflection turns
// into ~1e-5 absolute.
//
// lgamma / special_gammaln against std::lgamma in double of the same float inputs (so the reference's own
// error, ~1e-16 relative, is nil at float scale): the shifted range (0, 6), the zeros at 1 and 2, Stirling's
// range [6, 1e4), negative non-integers near and far (the reflection), and listed values: tiny x (+-1e-30,
// 1e-38, a subnormal), large x up to the float overflow (lgamma(1e37) is +inf in float), the poles (+-0,
// negative integers, -inf), +inf, NaN, and the sides of the poles at -1 and the first negative zeros.
// Tolerance: |got - want| <= 1e-5 + 1e-5 |want|. The relative part covers the float evaluation of a large
// result: a sum of a few terms of its own magnitude (Stirling's (z - 1/2)(log z - 1), the shift's log, the
// reflection's log sin), each a few ulps (6e-8) off; the reference sees the same float x, so x's own rounding
// costs nothing. The absolute part is where relative error means nothing: at the zeros of lgamma (x = 1, 2
// and two per negative unit interval from -2 on) the result is the difference of terms of magnitude
// lgamma(6..8) = 4.8..8.5, so a few ulps of those (4.8e-7..9.5e-7) remain. Measured on the CPU backend: at
// most 3.8e-6 absolute where |lgamma| < 10 (2.4e-6 around the zeros at 1 and 2), at most 2.3e-7 relative
// beyond; the bounds leave room for the CUDA backend's logf / sinf (1-2 ulp, no fast math).

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

NamedCase lgamma_case(const std::string& name, const std::string& op, InputFill fill) {
  NamedCase c;
  c.name = name;
  const std::string n = fill.values.empty() ? "s0" : std::to_string(fill.values.size());
  c.c.ir = one_op("f32[" + n + ", 1]", op + "(self=%x)", "f32[" + n + ", 1]",
                  fill.values.empty() ? "  symbol s0 in [1, 512] hint 256\n" : "");
  if (fill.values.empty()) c.c.runs = {{{256, 1}}, {{97, 1}}};
  c.c.fills[0] = std::move(fill);
  c.c.rtol = 1e-5;
  c.c.atol = 1e-5;
  c.c.elementwise_reference = [](double x) { return std::lgamma(x); };
  return c;
}

NamedCase lgamma_range(const std::string& name, double lo, double hi) {
  return lgamma_case(name, "aten.lgamma.default", InputFill{lo, hi});
}

// A half input is evaluated in float and rounded once: 1e-3 relative is two half ulps (2^-11 each: the
// reference is rounded to half too, and the float error may push the result across a rounding boundary).
NamedCase lgamma_half() {
  NamedCase c = lgamma_range("lgamma_half", -5.0, 8.0);
  c.c.ir = one_op("f16[s0, 1]", "aten.lgamma.default(self=%x)", "f16[s0, 1]",
                  "  symbol s0 in [1, 512] hint 256\n");
  c.c.rtol = 1e-3;
  return c;
}

// Tiny and huge magnitudes, poles, infinities, NaN, and the two sides of the pole at -1.
std::vector<double> lgamma_edges() {
  const double inf = std::numeric_limits<double>::infinity();
  return {1e-30, -1e-30, 1e-38, 1e-40,  1e-7,    0.5,     1.0,  2.0,        3.0,        1e10,
          1e30,  3e36,   1e37,  0.0,    -0.0,    -1.0,    -4.0, -1e10,      -inf,       inf,
          NAN,   -0.5,   -2.5,  -100.5, -0.9999, -1.0001, -1.5, -2.4570247, -2.7476826, -3.1435476};
}

CaseList gamma_cases() {
  return {
      ranged("digamma_shifted", "aten.digamma.default", 0.05, 6.0),
      ranged("digamma_asymptotic", "aten.digamma.default", 6.0, 80.0),
      ranged("digamma_reflection", "aten.digamma.default", -6.0, 0.0, 1e-4),
      ranged("special_psi", "aten.special_psi.default", 0.5, 4.0),
      ranged("special_digamma", "aten.special_digamma.default", 0.5, 4.0),
      edges("digamma_edges", "aten.digamma.default"),
      lgamma_range("lgamma_shifted", 1e-3, 6.0),
      lgamma_range("lgamma_zero_at_1", 0.9, 1.1),
      lgamma_range("lgamma_zero_at_2", 1.9, 2.1),
      lgamma_range("lgamma_stirling", 6.0, 1e4),
      lgamma_range("lgamma_reflection", -6.0, 0.0),
      lgamma_range("lgamma_reflection_far", -200.0, -6.0),
      lgamma_case("lgamma_edges", "aten.lgamma.default", InputFill{0, 0, 0, 0, lgamma_edges()}),
      edges("lgamma_torch_edges", "aten.lgamma.default"),
      lgamma_half(),
      lgamma_case("special_gammaln_edges", "aten.special_gammaln.default",
                  InputFill{0, 0, 0, 0, lgamma_edges()}),
  };
}

KILN_CONVERTER_CASES(Gamma, gamma_cases);

}  // namespace
}  // namespace kiln::conversion::testing
