// Fake quantization (aten.fake_quantize_per_tensor_affine / _per_channel_affine) against libtorch eager.
// Not folded (fp32 builds, a non-zero zero point, per channel): torch's arithmetic in fp32 elementwise
// layers, exact (atol 0: the same fp32 products and round-half-even; the per-tensor inverse scale is float(1
// / scale) where ATen takes 1.0f / float(scale), which differ only on a double-rounding tie, about one scale
// in 2^29, not these; a pointwise layer fused after it may differ from eager by an fp32 ulp, so the cases end
// with the fake quantization). Folded (int8 enabled, symmetric): no layer, the tensor gets the range, and a
// reader in fp32 sees the unrounded value: at most half a step (scale / 2) off torch, plus the clamp at
// quant_max * scale, which the inputs here stay inside.

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase exact(const std::string& name, const std::string& shape, const std::string& call,
                std::map<size_t, InputFill> fills) {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(%x: f32" + shape + ") {\n  %s: f32[3] = constant(\"s\", data=[0.0371, 0.11, 0.005])\n" +
           "  %z: i32[3] = constant(\"z\", data=[0, -7, 20])\n  %f: f32" + shape + " = " + call +
           "\n  return (%f)\n}\n";
  c.c.fills = std::move(fills);
  c.c.rtol = 0.0;
  c.c.atol = 0.0;
  return c;
}

CaseList fake_quantize_cases() {
  const std::map<size_t, InputFill> wide = {{0, InputFill{-6.0, 6.0}}};
  CaseList cases = {
      exact(
          "per_tensor_int8", "[4, 3, 5]",
          "aten.fake_quantize_per_tensor_affine.default(self=%x, scale=0.0371, zero_point=0, quant_min=-128, "
          "quant_max=127)",
          wide),
      exact(
          "per_tensor_uint8_zero_point", "[4, 3, 5]",
          "aten.fake_quantize_per_tensor_affine.default(self=%x, scale=0.0371, zero_point=100, quant_min=0, "
          "quant_max=255)",
          wide),
      exact("per_channel_axis1", "[4, 3, 5]",
            "aten.fake_quantize_per_channel_affine.default(self=%x, scale=%s, zero_point=%z, axis=1, "
            "quant_min=-128, "
            "quant_max=127)",
            wide),
  };
  // With int8 enabled, what cannot fold (an asymmetric one, per channel, bounds the kernels lack) is still
  // the exact arithmetic.
  for (NamedCase c :
       {exact("int8_enabled_zero_point", "[4, 3, 5]",
              "aten.fake_quantize_per_tensor_affine.default(self=%x, scale=0.0371, zero_point=100, "
              "quant_min=0, quant_max=255)",
              wide),
        exact("int8_enabled_per_channel", "[4, 3, 5]",
              "aten.fake_quantize_per_channel_affine.default(self=%x, scale=%s, zero_point=%z, axis=1, "
              "quant_min=-128, quant_max=127)",
              wide),
        exact("int8_enabled_4bit", "[4, 3, 5]",
              "aten.fake_quantize_per_tensor_affine.default(self=%x, scale=0.5, zero_point=0, "
              "quant_min=-8, quant_max=7)",
              wide)}) {
    c.c.settings.enabled_precisions = {settings::Precision::F32, settings::Precision::I8};
    cases.push_back(c);
  }
  NamedCase folded;
  folded.name = "per_tensor_folded_int8";
  folded.c.ir = one_op("f32[4, 3, 5]",
                       "aten.fake_quantize_per_tensor_affine.default(self=%x, scale=0.0371, zero_point=0, "
                       "quant_min=-128, quant_max=127)",
                       "f32[4, 3, 5]");
  folded.c.fills = {{0, InputFill{-4.5, 4.5}}};  // inside +-127 * 0.0371
  folded.c.settings.enabled_precisions = {settings::Precision::F32, settings::Precision::I8};
  folded.c.rtol = 0.0;
  folded.c.atol = 0.0371 / 2 + 1e-6;
  cases.push_back(folded);
  return cases;
}

KILN_CONVERTER_CASES(FakeQuantize, fake_quantize_cases);

}  // namespace
}  // namespace kiln::conversion::testing
