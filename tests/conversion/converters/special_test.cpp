// erfinv against libtorch eager on (-1, 1) (central and tail branches: |x| > 0.9966 is the tail), on a
// dynamic batch, and at exactly +-1 (+-inf) and beyond (NaN). Tolerance: rtol 1e-4 and atol 1e-5 (the harness
// default): the approximation's relative error is below 4e-7; its inputs are rounded to fp32 like torch's,
// and near +-1 erfinv's slope (~1 / (1 - |x|)) magnifies that rounding the same way on both sides.

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

CaseList special_cases() {
  NamedCase dyn;
  dyn.name = "erfinv";
  dyn.c.ir =
      one_op("f32[s0, 64]", "aten.erfinv.default(self=%x)", "f32[s0, 64]", "  symbol s0 in [1, 8] hint 2\n");
  dyn.c.runs = {{{3, 64}}, {{6, 64}}};
  dyn.c.fills[0] = {-0.9999, 0.9999};
  NamedCase tail;
  tail.name = "erfinv_tail";
  tail.c.ir = one_op("f32[256]", "aten.erfinv.default(self=%x)", "f32[256]");
  tail.c.fills[0] = {0.99, 0.99999};
  NamedCase edges;
  edges.name = "erfinv_edges";
  edges.c.ir =
      "graph(%x: f32[6]) {\n"
      "  %c: f32[6] = constant(\"edges\", data=[1.0, -1.0, 1.5, -2.0, 0.0, 0.5])\n"
      "  %s: f32[6] = aten.add.Tensor(self=%c, other=%x, *, alpha=0)\n"
      "  %y: f32[6] = aten.erfinv.default(self=%s)\n  return (%y)\n}\n";
  return {dyn, tail, edges};
}

KILN_CONVERTER_CASES(Special, special_cases);

}  // namespace
}  // namespace kiln::conversion::testing
