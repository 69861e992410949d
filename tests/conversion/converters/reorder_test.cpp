// flip and roll converters against libtorch eager: one and several dims, negative dims, shifts larger than
// the extent and negative, roll without dims (flattened), on a dynamic batch (dynamic dims flipped and rolled
// too). Data movement is exact; the harness tolerance is the default fp32 allclose(1e-4, 1e-5).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase reorder_case(const std::string& name, const std::string& call) {
  NamedCase c;
  c.name = name;
  c.c.ir = one_op("f32[s0, 4, 6]", call, "f32[s0, 4, 6]", "  symbol s0 in [1, 8] hint 2\n");
  c.c.runs = {{{3, 4, 6}}, {{5, 4, 6}}};
  return c;
}

CaseList reorder_cases() {
  return {
      reorder_case("flip_last", "aten.flip.default(self=%x, dims=[-1])"),
      reorder_case("flip_two", "aten.flip.default(self=%x, dims=[1, 2])"),
      reorder_case("flip_dynamic_dim", "aten.flip.default(self=%x, dims=[0])"),
      reorder_case("roll_one", "aten.roll.default(self=%x, shifts=[2], dims=[2])"),
      reorder_case("roll_two_negative", "aten.roll.default(self=%x, shifts=[-1, 9], dims=[1, -1])"),
      reorder_case("roll_dynamic_dim", "aten.roll.default(self=%x, shifts=[-4], dims=[0])"),
      reorder_case("roll_flat", "aten.roll.default(self=%x, shifts=[5], dims=[])"),
      [] {
        NamedCase c;
        c.name = "roll_static";
        c.c.ir = one_op("f32[3, 5, 6]", "aten.roll.default(self=%x, shifts=[2, -1], dims=[1, 2])", "f32[3, 5, 6]");
        return c;
      }(),
      reorder_case("roll_swin_window_shift", "aten.roll.default(self=%x, shifts=[-2, -3], dims=[1, 2])"),
  };
}

KILN_CONVERTER_CASES(Reorder, reorder_cases);

}  // namespace
}  // namespace kiln::conversion::testing
