// Activation converters against libtorch eager: every op on a dynamic batch (built once, run at two batch
// sizes), plus the option variants. Tolerance: the harness default fp32 allclose(1e-4, 1e-5).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

// A pointwise op on f32[s0, 6] with s0 in [1, 8]: run at batch 3 and 7.
NamedCase dynamic_pointwise(const std::string& name, const std::string& call, InputFill fill = {}) {
  NamedCase c;
  c.name = name;
  c.c.ir = one_op("f32[s0, 6]", call, "f32[s0, 6]", "  symbol s0 in [1, 8] hint 4\n");
  c.c.runs = {{{3, 6}}, {{7, 6}}};
  c.c.fills[0] = fill;
  return c;
}

CaseList activation_cases() {
  return {
      dynamic_pointwise("relu", "aten.relu.default(self=%x)"),
      dynamic_pointwise("sigmoid", "aten.sigmoid.default(self=%x)", {-6, 6}),
      dynamic_pointwise("tanh", "aten.tanh.default(self=%x)", {-3, 3}),
      dynamic_pointwise("silu", "aten.silu.default(self=%x)", {-6, 6}),
      dynamic_pointwise("hardswish", "aten.hardswish.default(self=%x)", {-5, 5}),
      dynamic_pointwise("mish", "aten.mish.default(self=%x)", {-4, 4}),
      dynamic_pointwise("gelu_erf", "aten.gelu.default(self=%x, *, approximate=\"none\")", {-4, 4}),
      dynamic_pointwise("gelu_tanh", "aten.gelu.default(self=%x, *, approximate=\"tanh\")", {-4, 4}),
      dynamic_pointwise("hardtanh", "aten.hardtanh.default(self=%x, min_val=-0.5, max_val=1.5)"),
      dynamic_pointwise("relu6", "aten.relu6.default(self=%x)", {-3, 9}),
      dynamic_pointwise("hardsigmoid", "aten.hardsigmoid.default(self=%x)", {-5, 5}),
      dynamic_pointwise("leaky_relu", "aten.leaky_relu.default(self=%x, negative_slope=0.2)"),
      dynamic_pointwise("elu", "aten.elu.default(self=%x, alpha=0.7, scale=1, input_scale=1)"),
      dynamic_pointwise("softplus", "aten.softplus.default(self=%x, beta=2, threshold=3)", {-4, 4}),
      dynamic_pointwise("softplus_default", "aten.softplus.default(self=%x, beta=1, threshold=20)", {-4, 4}),
      [] {
        NamedCase c;
        c.name = "prelu_channels";
        c.c.ir =
            "graph(%x: f32[s0, 3, 4, 5]) {\n  symbol s0 in [1, 4] hint 2\n"
            "  %w: f32[3] = parameter(\"act.weight\")\n"
            "  %y: f32[s0, 3, 4, 5] = aten.prelu.default(self=%x, weight=%w)\n  return (%y)\n}\n";
        c.c.runs = {{{2, 3, 4, 5}}, {{4, 3, 4, 5}}};
        return c;
      }(),
      [] {
        NamedCase c;
        c.name = "prelu_kernel_single";
        c.c.ir =
            "graph(%x: f32[2, 3, 4]) {\n"
            "  %w: f32[1] = parameter(\"act.weight\")\n"
            "  %y: f32[2, 3, 4] = aten._prelu_kernel.default(self=%x, weight=%w)\n  return (%y)\n}\n";
        // libtorch 1.13 lacks _prelu_kernel: prelu computes the same.
        c.c.reference_ir = c.c.ir;
        c.c.reference_ir.replace(c.c.reference_ir.find("_prelu_kernel"), 13, "prelu");
        return c;
      }(),
  };
}

KILN_CONVERTER_CASES(Activation, activation_cases);

}  // namespace
}  // namespace kiln::conversion::testing
