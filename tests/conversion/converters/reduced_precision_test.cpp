// Reduced precision: a few converters (linear, matmul, convolution, softmax, layer norm, an elementwise chain)
// built with enabled_precisions {f32, f16} and {f32, bf16} (weakly typed: the engine runs the plan in f16 / bf16
// with fp32 bindings) and compared with the fp32 libtorch reference. They run on every backend under test: cpu by
// default, cuda in the ctest kiln_conversion_gpu_tests (label gpu; skipped without a GPU).
// Tolerance: the harness's reduced-precision check, max relative error
// <= 1e-2 (see converter_harness.h). Sums here have <= 72 terms of magnitude <= 2, accumulated in fp32 by the
// matmul and convolution kernels; the error is dominated by rounding inputs, weights and outputs to 8 (bf16) or
// 11 (fp16) significant bits.

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

using Runs = std::vector<std::vector<std::vector<int64_t>>>;

NamedCase precision_case(const std::string& name, const std::string& inputs, const std::string& body,
                         Runs runs) {
  return graph_case(name, inputs, "s0 in [1, 8] hint 2", body, std::move(runs));
}

CaseList fp32_cases() {
  return {
      precision_case(
          "linear", "%x: f32[s0, 6, 64]",
          "  %w: f32[32, 64] = parameter(\"fc.weight\")\n  %b: f32[32] = parameter(\"fc.bias\")\n"
          "  %y: f32[s0, 6, 32] = aten.linear.default(input=%x, weight=%w, bias=%b)\n  return (%y)\n",
          {{{2, 6, 64}}, {{5, 6, 64}}}),
      precision_case("matmul", "%x: f32[s0, 4, 12, 48], %z: f32[s0, 4, 48, 20]",
                     "  %y: f32[s0, 4, 12, 20] = aten.matmul.default(self=%x, other=%z)\n  return (%y)\n",
                     {{{1, 4, 12, 48}, {1, 4, 48, 20}}, {{3, 4, 12, 48}, {3, 4, 48, 20}}}),
      precision_case(
          "conv2d", "%x: f32[s0, 8, 10, 10]",
          "  %w: f32[16, 8, 3, 3] = parameter(\"conv.weight\")\n  %b: f32[16] = parameter(\"conv.bias\")\n"
          "  %y: f32[s0, 16, 10, 10] = aten.convolution.default(input=%x, weight=%w, bias=%b, stride=[1, 1], "
          "padding=[1, 1], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1)\n  return "
          "(%y)\n",
          {{{1, 8, 10, 10}}, {{3, 8, 10, 10}}}),
      precision_case("softmax", "%x: f32[s0, 4, 64]",
                     "  %y: f32[s0, 4, 64] = aten.softmax.int(self=%x, dim=-1, dtype=None)\n  return (%y)\n",
                     {{{2, 4, 64}}, {{6, 4, 64}}}),
      precision_case("layer_norm", "%x: f32[s0, 6, 64]",
                     "  %w: f32[64] = parameter(\"ln.weight\")\n  %b: f32[64] = parameter(\"ln.bias\")\n"
                     "  %y: f32[s0, 6, 64] = aten.layer_norm.default(input=%x, normalized_shape=[64], "
                     "weight=%w, bias=%b, "
                     "eps=1e-05, cudnn_enable=False)\n  return (%y)\n",
                     {{{2, 6, 64}}, {{4, 6, 64}}}),
      precision_case(
          "elementwise", "%x: f32[s0, 8, 32], %z: f32[8, 32]",
          "  %m: f32[s0, 8, 32] = aten.mul.Tensor(self=%x, other=%z)\n"
          "  %a: f32[s0, 8, 32] = aten.add.Tensor(self=%m, other=%x, *, alpha=1)\n"
          "  %y: f32[s0, 8, 32] = aten.gelu.default(self=%a, *, approximate=\"none\")\n  return (%y)\n",
          {{{2, 8, 32}, {8, 32}}, {{5, 8, 32}, {8, 32}}}),
  };
}

CaseList reduced_precision_cases() {
  CaseList out;
  for (const auto& [suffix, precision] : {std::pair{"fp16", settings::Precision::F16}, std::pair{"bf16", settings::Precision::BF16}}) {
    for (NamedCase c : fp32_cases()) {
      c.name += std::string("_") + suffix;
      c.c.settings.enabled_precisions = {settings::Precision::F32, precision};
      out.push_back(std::move(c));
    }
  }
  return out;
}

KILN_CONVERTER_CASES(ReducedPrecision, reduced_precision_cases);

}  // namespace
}  // namespace kiln::conversion::testing
