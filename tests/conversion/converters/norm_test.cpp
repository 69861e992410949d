// Vector norm converters (linalg_vector_norm, norm.*) against libtorch eager: p = 2, 1, inf, -inf, 0, 3, 0.5,
// -1 over one dim, several dims or all dims, keepdim, dtype, on a dynamic batch; and F.normalize's pattern (x
// / clamp_min(norm, eps)) built in fp16 and bf16 on inputs whose sum of squares overflows fp16. Tolerance:
// fp32 cases the harness default allclose(1e-4, 1e-5) (sums of <= 24 terms, a pow of the sum);
// reduced-precision cases the harness's max relative error <= 1e-2 (see converter_harness.h): the norm is
// computed scaled by max |x| (all intermediates <= the element count) and reduced in fp32, so the only error
// is rounding |x| / max |x| and the result to 11 (fp16) or 8 (bf16) bits.

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase norm_case(const std::string& name, const std::string& call, const std::string& out,
                    InputFill fill = {}) {
  NamedCase c;
  c.name = name;
  c.c.ir = one_op("f32[s0, 4, 6]", call, out, "  symbol s0 in [1, 8] hint 2\n");
  c.c.runs = {{{3, 4, 6}}, {{5, 4, 6}}};
  c.c.fills[0] = fill;
  return c;
}

// x / clamp_min(||x||_2 over the last dim, 1e-12): torch.nn.functional.normalize, as swin_v2's cosine
// attention uses it, on values up to 300 in magnitude (sum of squares ~1.5e7 for 512 elements: beyond fp16's
// 65504).
NamedCase normalize(const std::string& name, settings::Precision reduced) {
  NamedCase c = graph_case(
      name, "%x: f32[s0, 3, 512]", "s0 in [1, 4] hint 2",
      "  %n: f32[s0, 3, 1] = aten.linalg_vector_norm.default(self=%x, ord=2, dim=[-1], keepdim=True, *, "
      "dtype=None)\n"
      "  %c: f32[s0, 3, 1] = aten.clamp_min.default(self=%n, min=1e-12)\n"
      "  %e: f32[s0, 3, 512] = aten.expand.default(self=%c, size=[-1, -1, 512], *, implicit=False)\n"
      "  %y: f32[s0, 3, 512] = aten.div.Tensor(self=%x, other=%e)\n  return (%y, %n)\n",
      {{{1, 3, 512}}, {{3, 3, 512}}}, {{0, InputFill{-300, 300}}});
  c.c.settings.enabled_precisions = {settings::Precision::F32, reduced};
  return c;
}

CaseList norm_cases() {
  const std::string d = ", *, dtype=None)";
  return {
      norm_case("vector_norm_2_last_keep",
                "aten.linalg_vector_norm.default(self=%x, ord=2, dim=[-1], keepdim=True" + d,
                "f32[s0, 4, 1]"),
      norm_case("vector_norm_2_all",
                "aten.linalg_vector_norm.default(self=%x, ord=2, dim=None, keepdim=False" + d, "f32[]"),
      norm_case("vector_norm_1_dims",
                "aten.linalg_vector_norm.default(self=%x, ord=1, dim=[1, 2], keepdim=False" + d, "f32[s0]"),
      norm_case("vector_norm_inf",
                "aten.linalg_vector_norm.default(self=%x, ord=inf, dim=[2], keepdim=False" + d, "f32[s0, 4]"),
      norm_case("vector_norm_neg_inf",
                "aten.linalg_vector_norm.default(self=%x, ord=-inf, dim=[1], keepdim=True" + d,
                "f32[s0, 1, 6]"),
      norm_case("vector_norm_0", "aten.linalg_vector_norm.default(self=%x, ord=0, dim=[2], keepdim=False" + d,
                "f32[s0, 4]"),
      norm_case("vector_norm_3",
                "aten.linalg_vector_norm.default(self=%x, ord=3, dim=[0, 2], keepdim=True" + d,
                "f32[1, 4, 1]"),
      norm_case("vector_norm_half",
                "aten.linalg_vector_norm.default(self=%x, ord=0.5, dim=[-1], keepdim=False" + d, "f32[s0, 4]",
                {0.1, 2}),
      norm_case("vector_norm_neg_1",
                "aten.linalg_vector_norm.default(self=%x, ord=-1, dim=[-1], keepdim=False" + d, "f32[s0, 4]",
                {0.1, 2}),
      norm_case("vector_norm_large",
                "aten.linalg_vector_norm.default(self=%x, ord=2, dim=[1], keepdim=False" + d, "f32[s0, 6]",
                {-3e3, 3e3}),
      norm_case("norm_scalar", "aten.norm.Scalar(self=%x, p=2)", "f32[]"),
      norm_case("norm_dim", "aten.norm.ScalarOpt_dim(self=%x, p=1, dim=[-1], keepdim=True)", "f32[s0, 4, 1]"),
      norm_case("norm_dim_none_p", "aten.norm.ScalarOpt_dim(self=%x, p=None, dim=[1], keepdim=False)",
                "f32[s0, 6]"),
      norm_case("norm_dim_dtype",
                "aten.norm.ScalarOpt_dim_dtype(self=%x, p=inf, dim=[2], keepdim=False, *, dtype=dtype.f32)",
                "f32[s0, 4]"),
      norm_case("norm_dtype", "aten.norm.ScalarOpt_dtype(self=%x, p=3, *, dtype=dtype.f32)", "f32[]"),
      normalize("normalize_fp16", settings::Precision::F16),
      normalize("normalize_bf16", settings::Precision::BF16),
  };
}

KILN_CONVERTER_CASES(Norm, norm_cases);

}  // namespace
}  // namespace kiln::conversion::testing
