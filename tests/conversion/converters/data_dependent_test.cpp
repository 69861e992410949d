// nonzero, argwhere and masked_select against libtorch eager: outputs whose length depends on the data,
// collected through an output allocator (the harness binds one to every data-dependent binding), on static
// and dynamic inputs, with about half the elements selected; masked_select with a mask broadcast against the
// data and the selected values consumed by a later layer in the same engine. Indices are exact and values are
// copied: the harness tolerance (fp32 allclose(1e-4, 1e-5)) is not used up.

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

using Runs = std::vector<std::vector<std::vector<int64_t>>>;

CaseList data_dependent_cases() {
  return {
      graph_case("nonzero_float", "%x: f32[s0, 5]", "s0 in [1, 8] hint 2",
                 "  %r: f32[s0, 5] = aten.relu.default(self=%x)\n"
                 "  %y: i64[u0, 2] = aten.nonzero.default(self=%r)\n  return (%y)\n",
                 Runs{{{3, 5}}, {{7, 5}}}),
      graph_case("nonzero_bool_3d", "%x: f32[2, 3, 4]", "s0 in [1, 8] hint 2",
                 "  %m: bool[2, 3, 4] = aten.gt.Scalar(self=%x, other=0.5)\n"
                 "  %y: i64[u0, 3] = aten.nonzero.default(self=%m)\n  return (%y)\n"),
      graph_case("argwhere", "%x: f32[s0, 6]", "s0 in [1, 8] hint 2",
                 "  %m: bool[s0, 6] = aten.lt.Scalar(self=%x, other=0)\n"
                 "  %y: i64[u0, 2] = aten.argwhere.default(self=%m)\n  return (%y)\n",
                 Runs{{{2, 6}}, {{5, 6}}}),
      graph_case("masked_select", "%x: f32[s0, 4, 5], %z: f32[s0, 4, 5]", "s0 in [1, 8] hint 2",
                 "  %m: bool[s0, 4, 5] = aten.gt.Scalar(self=%z, other=0)\n"
                 "  %y: f32[u0] = aten.masked_select.default(self=%x, mask=%m)\n  return (%y)\n",
                 Runs{{{2, 4, 5}, {2, 4, 5}}, {{6, 4, 5}, {6, 4, 5}}}),
      graph_case("masked_select_broadcast_then_exp", "%x: f32[s0, 4, 5], %z: f32[4, 5]",
                 "s0 in [1, 8] hint 2",
                 "  %m: bool[4, 5] = aten.gt.Scalar(self=%z, other=0)\n"
                 "  %s: f32[u0] = aten.masked_select.default(self=%x, mask=%m)\n"
                 "  %y: f32[u0] = aten.exp.default(self=%s)\n  return (%y)\n",
                 Runs{{{3, 4, 5}, {4, 5}}, {{5, 4, 5}, {4, 5}}}),
  };
}

KILN_CONVERTER_CASES(DataDependent, data_dependent_cases);

}  // namespace
}  // namespace kiln::conversion::testing
