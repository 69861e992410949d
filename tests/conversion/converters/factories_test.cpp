// Factory converters against libtorch eager: arange (start/end/step forms), full/zeros/ones with static and
// symbolic sizes, the *_like forms and scalar_tensor, each combined with a dynamic input; arange with a SymInt end.
// Tolerance: the harness default fp32 allclose(1e-4, 1e-5).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase factory_case(const std::string& name, const std::string& body) {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(%x: f32[s0, 6]) {\n  symbol s0 in [1, 8] hint 2\n" + body + "}\n";
  c.c.runs = {{{2, 6}}, {{5, 6}}};
  return c;
}

// Runs at batch 2, 5 and 3. Sizes giving a length of 0 (batch 1 for start 1, batch >= 6 for the negative step) are
// left out: the harness cannot bind an empty output buffer.
NamedCase three_sizes(NamedCase c) {
  c.c.runs = {{{2, 6}}, {{5, 6}}, {{3, 6}}};
  return c;
}

const std::string kAdd = "  %y: f32[s0, 6] = aten.add.Tensor(self=%x, other=%f, *, alpha=1)\n  return (%y)\n";

CaseList factory_cases() {
  const std::string opts = "dtype=None, layout=None, device=None, pin_memory=None";
  return {
      factory_case("arange_end", "  %f: i64[6] = aten.arange.default(end=6, *, " + opts + ")\n" + kAdd),
      factory_case("arange_start",
                   "  %f: i64[6] = aten.arange.start(start=-2, end=4, *, " + opts + ")\n" + kAdd),
      factory_case(
          "arange_start_step_float",
          "  %f: f32[6] = aten.arange.start_step(start=0.5, end=3.5, step=0.5, *, " + opts + ")\n" + kAdd),
      factory_case("full_symbolic",
                   "  %n: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)\n"
                   "  %f: f32[s0, 6] = aten.full.default(size=[%n, 6], fill_value=1.5, *, " +
                       opts + ")\n" + kAdd),
      factory_case("zeros", "  %f: f32[1, 6] = aten.zeros.default(size=[1, 6], *, " + opts + ")\n" + kAdd),
      factory_case("ones_int",
                   "  %f: i64[6] = aten.ones.default(size=[6], *, dtype=dtype.i64, layout=None, device=None, "
                   "pin_memory=None)\n" +
                       kAdd),
      factory_case("full_like", "  %f: f32[s0, 6] = aten.full_like.default(self=%x, fill_value=-2.5, *, " +
                                    opts + ", memory_format=None)\n" + kAdd),
      factory_case("zeros_like", "  %f: f32[s0, 6] = aten.zeros_like.default(self=%x, *, " + opts +
                                     ", memory_format=None)\n" + kAdd),
      factory_case("zero", "  %f: f32[s0, 6] = aten.zero.default(self=%x)\n" + kAdd),
      factory_case("ones_like", "  %f: f32[s0, 6] = aten.ones_like.default(self=%x, *, " + opts +
                                    ", memory_format=None)\n" + kAdd),
      // arange with a SymInt end (torch.arange(seq_len)); the length is computed from the shape at run time.
      three_sizes(factory_case("arange_sym_end",
                               "  %n: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)\n"
                               "  %f: i64[s0] = aten.arange.default(end=%n, *, " +
                                   opts + ")\n  return (%f)\n")),
      three_sizes(factory_case(
          "arange_sym_end_start_step_float",
          "  %n: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)\n"
          "  %f: f32[floordiv(s0, 2)] = aten.arange.start_step(start=1, end=%n, step=2, *, dtype=dtype.f32, "
          "layout=None, device=None, pin_memory=None)\n  return (%f)\n")),
      three_sizes(
          factory_case("arange_sym_end_negative_step",
                       "  %n: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)\n"
                       "  %f: i64[max(0, 6 - s0)] = aten.arange.start_step(start=6, end=%n, step=-1, *, " +
                           opts + ")\n  return (%f)\n")),
      factory_case("scalar_tensor",
                   "  %f: f32[] = aten.scalar_tensor.default(s=0.25, *, " + opts + ")\n" + kAdd),
  };
}

KILN_CONVERTER_CASES(Factories, factory_cases);

}  // namespace
}  // namespace kiln::conversion::testing
