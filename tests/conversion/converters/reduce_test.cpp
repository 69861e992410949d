// Reduction, softmax, cumsum and topk converters against libtorch eager, static and on a dynamic batch.
// Tolerance: the harness default fp32 allclose(1e-4, 1e-5) (sums of at most 60 terms of magnitude <= 2).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase reduce_case(const std::string& name, const std::string& call, const std::string& out) {
  NamedCase c;
  c.name = name;
  c.c.ir = one_op("f32[s0, 4, 6]", call, out, "  symbol s0 in [1, 8] hint 2\n");
  c.c.runs = {{{3, 4, 6}}, {{5, 4, 6}}};
  return c;
}

NamedCase two_out(const std::string& name, const std::string& op, const std::string& args, const std::string& o1,
                  const std::string& o2) {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(%x: f32[s0, 4, 6]) {\n  symbol s0 in [1, 8] hint 2\n  %v: " + o1 + ", %i: " + o2 + " = " + op +
           "(self=%x, " + args + ")\n  return (%v, %i)\n}\n";
  c.c.runs = {{{3, 4, 6}}, {{5, 4, 6}}};
  return c;
}

CaseList reduce_cases() {
  return {
      reduce_case("mean_dim", "aten.mean.dim(self=%x, dim=[-1], keepdim=False, *, dtype=None)", "f32[s0, 4]"),
      reduce_case("mean_dims_keep", "aten.mean.dim(self=%x, dim=[1, 2], keepdim=True, *, dtype=None)",
                  "f32[s0, 1, 1]"),
      reduce_case("mean_all", "aten.mean.default(self=%x, *, dtype=None)", "f32[]"),
      reduce_case("sum_dim", "aten.sum.dim_IntList(self=%x, dim=[1], keepdim=False, *, dtype=None)",
                  "f32[s0, 6]"),
      reduce_case("sum_all", "aten.sum.default(self=%x, *, dtype=None)", "f32[]"),
      reduce_case("prod_dim", "aten.prod.dim_int(self=%x, dim=1, keepdim=False, *, dtype=None)",
                  "f32[s0, 6]"),
      reduce_case("amax", "aten.amax.default(self=%x, dim=[2], keepdim=False)", "f32[s0, 4]"),
      reduce_case("amin", "aten.amin.default(self=%x, dim=[1, 2], keepdim=True)", "f32[s0, 1, 1]"),
      two_out("max_dim", "aten.max.dim", "dim=2, keepdim=False", "f32[s0, 4]", "i64[s0, 4]"),
      two_out("min_dim", "aten.min.dim", "dim=1, keepdim=True", "f32[s0, 1, 6]", "i64[s0, 1, 6]"),
      reduce_case("argmax", "aten.argmax.default(self=%x, dim=-1, keepdim=False)", "i64[s0, 4]"),
      reduce_case("argmin_keep", "aten.argmin.default(self=%x, dim=1, keepdim=True)", "i64[s0, 1, 6]"),
      reduce_case("softmax", "aten.softmax.int(self=%x, dim=-1, dtype=None)", "f32[s0, 4, 6]"),
      reduce_case("softmax_internal", "aten._softmax.default(self=%x, dim=1, half_to_float=False)",
                  "f32[s0, 4, 6]"),
      reduce_case("log_softmax", "aten.log_softmax.int(self=%x, dim=2, dtype=None)", "f32[s0, 4, 6]"),
      reduce_case("log_softmax_internal", "aten._log_softmax.default(self=%x, dim=-1, half_to_float=False)",
                  "f32[s0, 4, 6]"),
      reduce_case("cumsum", "aten.cumsum.default(self=%x, dim=2, *, dtype=None)", "f32[s0, 4, 6]"),
      two_out("topk", "aten.topk.default", "k=3, dim=-1, largest=True, sorted=True", "f32[s0, 4, 3]",
              "i64[s0, 4, 3]"),
      two_out("topk_smallest", "aten.topk.default", "k=2, dim=1, largest=False, sorted=True", "f32[s0, 2, 6]",
              "i64[s0, 2, 6]"),
  };
}

KILN_CONVERTER_CASES(Reduce, reduce_cases);

}  // namespace
}  // namespace kiln::conversion::testing
