// NaN and infinity propagation against libtorch eager: inputs with NaN, +inf and -inf at several positions
// through relu, clamps (relu6, hardtanh, clamp with one or two bounds), leaky relu with slope 0, maximum /
// minimum, max pooling, amax, and convolution / linear with fused relu and clip post-ops. torch propagates NaN
// through all of them (relu(NaN) = NaN, clamp(NaN) = NaN, max(NaN, x) = NaN); the engine's ReLU used to map NaN
// to 0, and so did oneDNN's relu / clip post-ops. Tolerance: the harness default fp32 allclose(1e-4, 1e-5),
// NaN equal to NaN and infinities exact; the oneDNN form of a clip with an upper bound computes
// hi - relu(hi - y), off by at most half an ulp of hi (3e-7 for relu6) from the exact value.

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

/// `every` / `at`: where the non-finite values sit (see InputFill::nonfinite_every).
InputFill nonfinite(int64_t every, int64_t at, double lo = -2.0, double hi = 2.0) {
  InputFill f{lo, hi};
  f.nonfinite_every = every;
  f.nonfinite_at = at;
  return f;
}

NamedCase pointwise(const std::string& name, const std::string& call, InputFill fill) {
  NamedCase c;
  c.name = name;
  c.c.ir = one_op("f32[5, 7]", call, "f32[5, 7]");
  c.c.fills[0] = fill;
  return c;
}

NamedCase graph(const std::string& name, const std::string& inputs, const std::string& body,
                std::map<size_t, InputFill> fills) {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(" + inputs + ") {\n" + body + "}\n";
  c.c.fills = std::move(fills);
  return c;
}

/// conv2d (3x3, `stride`, padding 1, bias) followed by `act` (a call on %c) on an f32[2, 4, 9, 9] input.
NamedCase conv_then(const std::string& name, const std::string& act, int stride, InputFill fill) {
  int out = stride == 1 ? 9 : 5;
  std::string shape = "f32[2, 6, " + std::to_string(out) + ", " + std::to_string(out) + "]";
  std::string s = std::to_string(stride);
  return graph(name, "%x: f32[2, 4, 9, 9]",
               "  %w: f32[6, 4, 3, 3] = parameter(\"conv.weight\")\n  %b: f32[6] = parameter(\"conv.bias\")\n"
               "  %c: " + shape + " = aten.conv2d.default(input=%x, weight=%w, bias=%b, stride=[" + s + ", " + s +
                   "], padding=[1, 1], dilation=[1, 1], groups=1)\n"
                   "  %y: " + shape + " = " + act + "\n  return (%y)\n",
               {{0, fill}});
}

/// linear (16 -> 12, bias) followed by `act` (a call on %c).
NamedCase linear_then(const std::string& name, const std::string& act, InputFill fill) {
  return graph(name, "%x: f32[6, 16]",
               "  %w: f32[12, 16] = parameter(\"fc.weight\")\n  %b: f32[12] = parameter(\"fc.bias\")\n"
               "  %c: f32[6, 12] = aten.linear.default(input=%x, weight=%w, bias=%b)\n"
               "  %y: f32[6, 12] = " + act + "\n  return (%y)\n",
               {{0, fill}});
}

CaseList nonfinite_cases() {
  return {
      pointwise("relu", "aten.relu.default(self=%x)", nonfinite(4, 1)),
      pointwise("relu_first", "aten.relu.default(self=%x)", nonfinite(7, 0)),
      pointwise("relu6", "aten.relu6.default(self=%x)", nonfinite(3, 2, -3, 9)),
      pointwise("hardtanh", "aten.hardtanh.default(self=%x, min_val=-0.5, max_val=1.5)", nonfinite(5, 4)),
      pointwise("clamp", "aten.clamp.default(self=%x, min=-1, max=1)", nonfinite(4, 3)),
      pointwise("clamp_min", "aten.clamp.default(self=%x, min=0.5)", nonfinite(3, 0)),
      pointwise("clamp_max", "aten.clamp.default(self=%x, max=0.5)", nonfinite(3, 1)),
      pointwise("leaky_relu_zero_slope", "aten.leaky_relu.default(self=%x, negative_slope=0.0)", nonfinite(4, 2)),
      pointwise("hardswish", "aten.hardswish.default(self=%x)", nonfinite(6, 5, -5, 5)),
      graph("maximum_minimum", "%x: f32[5, 7], %z: f32[5, 7]",
            "  %a: f32[5, 7] = aten.maximum.default(self=%x, other=%z)\n"
            "  %b: f32[5, 7] = aten.minimum.default(self=%x, other=%z)\n  return (%a, %b)\n",
            {{0, nonfinite(5, 1)}, {1, nonfinite(4, 2)}}),
      graph("max_pool2d", "%x: f32[2, 3, 8, 8]",
            "  %y: f32[2, 3, 4, 4] = aten.max_pool2d.default(self=%x, kernel_size=[2, 2], stride=[2, 2], "
            "padding=[0, 0], dilation=[1, 1], ceil_mode=False)\n  return (%y)\n",
            {{0, nonfinite(11, 3)}}),
      graph("amax", "%x: f32[4, 9]", "  %y: f32[4] = aten.amax.default(self=%x, dim=[1], keepdim=False)\n  return (%y)\n",
            {{0, nonfinite(13, 5)}}),
      conv_then("conv_relu", "aten.relu.default(self=%c)", 2, nonfinite(37, 11)),
      conv_then("conv_relu6", "aten.relu6.default(self=%c)", 2, nonfinite(53, 20)),
      conv_then("conv_hardtanh", "aten.hardtanh.default(self=%c, min_val=-1.0, max_val=1.0)", 2, nonfinite(41, 7)),
      conv_then("conv_clamp_max", "aten.clamp.default(self=%c, max=0.25)", 2, nonfinite(47, 3)),
      linear_then("linear_relu", "aten.relu.default(self=%c)", nonfinite(17, 4)),
      linear_then("linear_relu6", "aten.relu6.default(self=%c)", nonfinite(23, 9)),
      // Two fused activations that map onto one oneDNN algorithm with different parameters (elu alpha 0.5 and
      // 1.0): oneDNN 2.6 applied the first one's parameters to both.
      graph("linear_elu_elu_relu", "%x: f32[6, 16]",
            "  %w: f32[12, 16] = parameter(\"fc.weight\")\n"
            "  %c: f32[6, 12] = aten.linear.default(input=%x, weight=%w, bias=None)\n"
            "  %e: f32[6, 12] = aten.elu.default(self=%c, alpha=0.5, scale=1, input_scale=1)\n"
            "  %f: f32[6, 12] = aten.elu.default(self=%e, alpha=1.0, scale=1, input_scale=1)\n"
            "  %y: f32[6, 12] = aten.relu.default(self=%f)\n  return (%y)\n",
            {{0, nonfinite(19, 2)}}),
  };
}

KILN_CONVERTER_CASES(NonFinite, nonfinite_cases);

}  // namespace
}  // namespace kiln::conversion::testing
