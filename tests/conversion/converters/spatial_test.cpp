// Convolution, pooling and resize converters against libtorch eager: 1-D/2-D/3-D convolutions with stride,
// padding, dilation and groups, transposed convolution with output padding, the pre-lowering conv forms, max and
// average pools (ceil_mode, count_include_pad), adaptive pools, nearest and (bi/tri)linear upsampling with and
// without align_corners. Dynamic batch where the converter claims it. Tolerance: the harness default fp32
// allclose(1e-4, 1e-5) (convolution sums of <= 108 products of magnitude <= 2).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

// `reference_body`: the same function in ops libtorch 1.13 knows, when `body` uses one it lacks.
NamedCase spatial_case(const std::string& name, const std::string& in, const std::string& body,
                       std::vector<std::vector<std::vector<int64_t>>> runs = {},
                       const std::string& reference_body = "") {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(%x: " + in + ") {\n  symbol s0 in [1, 4] hint 2\n" + body + "}\n";
  if (!reference_body.empty()) c.c.reference_ir = "graph(%x: " + in + ") {\n" + reference_body + "}\n";
  c.c.runs = std::move(runs);
  return c;
}

std::string conv(const std::string& w, const std::string& b, const std::string& out, const std::string& args) {
  return "  %w: " + w + " = parameter(\"conv.weight\")\n" +
         (b.empty() ? std::string() : "  %b: " + b + " = parameter(\"conv.bias\")\n") + "  %y: " + out +
         " = aten.convolution.default(input=%x, weight=%w, bias=" + (b.empty() ? "None" : "%b") + ", " + args +
         ")\n  return (%y)\n";
}

CaseList spatial_cases() {
  const std::vector<std::vector<std::vector<int64_t>>> img = {{{1, 4, 9, 9}}, {{3, 4, 9, 9}}};
  return {
      spatial_case("conv2d", "f32[s0, 4, 9, 9]",
                   conv("f32[6, 4, 3, 3]", "f32[6]", "f32[s0, 6, 9, 9]",
                        "stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False, "
                        "output_padding=[0, 0], groups=1"),
                   img),
      spatial_case("conv2d_stride_dilation_groups", "f32[s0, 4, 9, 9]",
                   conv("f32[6, 2, 3, 3]", "", "f32[s0, 6, 3, 3]",
                        "stride=[2, 2], padding=[0, 0], dilation=[2, 2], transposed=False, "
                        "output_padding=[0, 0], groups=2"),
                   img),
      spatial_case("conv2d_depthwise_asymmetric", "f32[2, 4, 9, 9]",
                   conv("f32[4, 1, 3, 1]", "f32[4]", "f32[2, 4, 5, 11]",
                        "stride=[2, 1], padding=[1, 1], dilation=[1, 1], transposed=False, "
                        "output_padding=[0, 0], groups=4")),
      spatial_case(
          "conv1d", "f32[s0, 3, 12]",
          conv("f32[5, 3, 3]", "f32[5]", "f32[s0, 5, 6]",
               "stride=[2], padding=[1], dilation=[1], transposed=False, output_padding=[0], groups=1"),
          {{{2, 3, 12}}, {{3, 3, 12}}}),
      spatial_case("conv3d", "f32[1, 2, 5, 6, 6]",
                   conv("f32[3, 2, 3, 3, 3]", "f32[3]", "f32[1, 3, 5, 6, 6]",
                        "stride=[1, 1, 1], padding=[1, 1, 1], dilation=[1, 1, 1], transposed=False, "
                        "output_padding=[0, 0, 0], groups=1")),
      spatial_case("conv_transpose2d", "f32[s0, 4, 5, 5]",
                   conv("f32[4, 3, 3, 3]", "f32[3]", "f32[s0, 3, 10, 10]",
                        "stride=[2, 2], padding=[1, 1], dilation=[1, 1], transposed=True, output_padding=[1, "
                        "1], groups=1"),
                   {{{1, 4, 5, 5}}, {{2, 4, 5, 5}}}),
      spatial_case(
          "conv2d_op", "f32[2, 4, 8, 8]",
          "  %w: f32[5, 4, 3, 3] = parameter(\"conv.weight\")\n  %b: f32[5] = parameter(\"conv.bias\")\n"
          "  %y: f32[2, 5, 6, 6] = aten.conv2d.default(input=%x, weight=%w, bias=%b, stride=[1, 1], "
          "padding=[0, 0], "
          "dilation=[1, 1], groups=1)\n  return (%y)\n"),
      spatial_case(
          "conv1d_op", "f32[2, 4, 8]",
          "  %w: f32[5, 4, 3] = parameter(\"conv.weight\")\n"
          "  %y: f32[2, 5, 8] = aten.conv1d.default(input=%x, weight=%w, bias=None, stride=[1], padding=[1], "
          "dilation=[1], groups=1)\n  return (%y)\n"),
      spatial_case(
          "conv3d_op", "f32[1, 2, 4, 4, 4]",
          "  %w: f32[2, 2, 2, 2, 2] = parameter(\"conv.weight\")\n"
          "  %y: f32[1, 2, 3, 3, 3] = aten.conv3d.default(input=%x, weight=%w, bias=None, stride=[1, 1, 1], "
          "padding=[0, 0, 0], dilation=[1, 1, 1], groups=1)\n  return (%y)\n"),
      spatial_case(
          "conv_transpose1d_op", "f32[2, 4, 6]",
          "  %w: f32[4, 3, 3] = parameter(\"conv.weight\")\n"
          "  %y: f32[2, 3, 13] = aten.conv_transpose1d.input(input=%x, weight=%w, bias=None, stride=[2], "
          "padding=[0], output_padding=[0], groups=1, dilation=[1])\n  return (%y)\n",
          {},
          "  %w: f32[4, 3, 3] = parameter(\"conv.weight\")\n"
          "  %y: f32[2, 3, 13] = aten.convolution.default(input=%x, weight=%w, bias=None, stride=[2], "
          "padding=[0], dilation=[1], transposed=True, output_padding=[0], groups=1)\n  return (%y)\n"),
      spatial_case(
          "conv_transpose2d_op", "f32[1, 4, 4, 4]",
          "  %w: f32[4, 2, 3, 3] = parameter(\"conv.weight\")\n  %b: f32[4] = parameter(\"conv.bias\")\n"
          "  %y: f32[1, 4, 6, 6] = aten.conv_transpose2d.input(input=%x, weight=%w, bias=%b, stride=[1, 1], "
          "padding=[0, 0], output_padding=[0, 0], groups=2, dilation=[1, 1])\n  return (%y)\n"),
      spatial_case(
          "conv_transpose3d_op", "f32[1, 2, 3, 3, 3]",
          "  %w: f32[2, 2, 2, 2, 2] = parameter(\"conv.weight\")\n"
          "  %y: f32[1, 2, 4, 4, 4] = aten.conv_transpose3d.input(input=%x, weight=%w, bias=None, stride=[1, "
          "1, 1], "
          "padding=[0, 0, 0], output_padding=[0, 0, 0], groups=1, dilation=[1, 1, 1])\n  return (%y)\n"),
      spatial_case(
          "max_pool2d", "f32[s0, 4, 9, 9]",
          "  %y: f32[s0, 4, 4, 4] = aten.max_pool2d.default(self=%x, kernel_size=[3, 3], stride=[2, 2], "
          "padding=[0, 0], dilation=[1, 1], ceil_mode=False)\n  return (%y)\n",
          img),
      spatial_case(
          "max_pool2d_ceil_pad", "f32[2, 3, 8, 8]",
          "  %y: f32[2, 3, 5, 5] = aten.max_pool2d.default(self=%x, kernel_size=[3, 3], stride=[2, 2], "
          "padding=[1, 1], dilation=[1, 1], ceil_mode=True)\n  return (%y)\n"),
      spatial_case(
          "max_pool2d_with_indices", "f32[s0, 4, 9, 9]",
          "  %y: f32[s0, 4, 5, 5], %i: i64[s0, 4, 5, 5] = aten.max_pool2d_with_indices.default(self=%x, "
          "kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[1, 1], ceil_mode=False)\n  return "
          "(%y)\n",
          img),
      spatial_case(
          "max_pool1d", "f32[2, 3, 10]",
          "  %y: f32[2, 3, 4] = aten.max_pool1d.default(self=%x, kernel_size=[3], stride=[2], padding=[0], "
          "dilation=[1], ceil_mode=False)\n  return (%y)\n"),
      spatial_case("max_pool3d", "f32[1, 2, 6, 6, 6]",
                   "  %y: f32[1, 2, 3, 3, 3] = aten.max_pool3d.default(self=%x, kernel_size=[2, 2, 2], "
                   "stride=[2, 2, 2], "
                   "padding=[0, 0, 0], dilation=[1, 1, 1], ceil_mode=False)\n  return (%y)\n"),
      spatial_case(
          "max_pool3d_with_indices", "f32[1, 2, 6, 6, 6]",
          "  %y: f32[1, 2, 3, 3, 3], %i: i64[1, 2, 3, 3, 3] = aten.max_pool3d_with_indices.default(self=%x, "
          "kernel_size=[2, 2, 2], stride=[2, 2, 2], padding=[0, 0, 0], dilation=[1, 1, 1], ceil_mode=False)\n"
          "  return (%y)\n"),
      spatial_case(
          "avg_pool2d", "f32[s0, 4, 9, 9]",
          "  %y: f32[s0, 4, 5, 5] = aten.avg_pool2d.default(self=%x, kernel_size=[3, 3], stride=[2, 2], "
          "padding=[1, 1], ceil_mode=False, count_include_pad=True, divisor_override=None)\n  return (%y)\n",
          img),
      spatial_case(
          "avg_pool2d_exclude_pad_ceil", "f32[2, 3, 8, 8]",
          "  %y: f32[2, 3, 5, 5] = aten.avg_pool2d.default(self=%x, kernel_size=[3, 3], stride=[2, 2], "
          "padding=[1, 1], ceil_mode=True, count_include_pad=False, divisor_override=None)\n  return (%y)\n"),
      spatial_case(
          "avg_pool1d", "f32[2, 3, 10]",
          "  %y: f32[2, 3, 5] = aten.avg_pool1d.default(self=%x, kernel_size=[2], stride=[2], padding=[0], "
          "ceil_mode=False, count_include_pad=True)\n  return (%y)\n"),
      spatial_case("avg_pool3d", "f32[1, 2, 4, 4, 4]",
                   "  %y: f32[1, 2, 2, 2, 2] = aten.avg_pool3d.default(self=%x, kernel_size=[2, 2, 2], "
                   "stride=[2, 2, 2], "
                   "padding=[0, 0, 0], ceil_mode=False, count_include_pad=True, divisor_override=None)\n  "
                   "return (%y)\n"),
      spatial_case("adaptive_avg_pool2d", "f32[s0, 4, 9, 9]",
                   "  %y: f32[s0, 4, 1, 1] = aten.adaptive_avg_pool2d.default(self=%x, output_size=[1, 1])\n "
                   " return (%y)\n",
                   img),
      spatial_case("adaptive_avg_pool2d_uneven", "f32[2, 3, 10, 7]",
                   "  %y: f32[2, 3, 3, 4] = aten._adaptive_avg_pool2d.default(self=%x, output_size=[3, 4])\n "
                   " return (%y)\n"),
      spatial_case(
          "adaptive_avg_pool1d", "f32[2, 3, 10]",
          "  %y: f32[2, 3, 4] = aten.adaptive_avg_pool1d.default(self=%x, output_size=[4])\n  return (%y)\n"),
      spatial_case(
          "adaptive_avg_pool3d", "f32[1, 2, 4, 6, 5]",
          "  %y: f32[1, 2, 2, 3, 2] = aten.adaptive_avg_pool3d.default(self=%x, output_size=[2, 3, 2])\n"
          "  return (%y)\n"),
      spatial_case("adaptive_max_pool2d", "f32[2, 3, 9, 8]",
                   "  %y: f32[2, 3, 3, 3], %i: i64[2, 3, 3, 3] = aten.adaptive_max_pool2d.default(self=%x, "
                   "output_size=[3, 3])\n  return (%y)\n"),
      spatial_case("upsample_nearest2d_vec", "f32[s0, 3, 4, 5]",
                   "  %y: f32[s0, 3, 8, 10] = aten.upsample_nearest2d.vec(input=%x, output_size=None, "
                   "scale_factors=[2.0, 2.0])\n  return (%y)\n",
                   {{{1, 3, 4, 5}}, {{2, 3, 4, 5}}}),
      spatial_case("upsample_nearest2d_size", "f32[2, 3, 4, 5]",
                   "  %y: f32[2, 3, 7, 9] = aten.upsample_nearest2d.default(self=%x, output_size=[7, 9], "
                   "scales_h=None, "
                   "scales_w=None)\n  return (%y)\n"),
      spatial_case("upsample_nearest1d_vec", "f32[2, 3, 5]",
                   "  %y: f32[2, 3, 15] = aten.upsample_nearest1d.vec(input=%x, output_size=None, "
                   "scale_factors=[3.0])\n"
                   "  return (%y)\n"),
      spatial_case("upsample_nearest3d_vec", "f32[1, 2, 2, 3, 3]",
                   "  %y: f32[1, 2, 4, 6, 6] = aten.upsample_nearest3d.vec(input=%x, output_size=[4, 6, 6], "
                   "scale_factors=None)\n  return (%y)\n"),
      spatial_case("upsample_bilinear2d_vec", "f32[s0, 3, 4, 5]",
                   "  %y: f32[s0, 3, 8, 10] = aten.upsample_bilinear2d.vec(input=%x, output_size=None, "
                   "align_corners=False, "
                   "scale_factors=[2.0, 2.0])\n  return (%y)\n",
                   {{{1, 3, 4, 5}}, {{2, 3, 4, 5}}}),
      spatial_case("upsample_bilinear2d_align", "f32[2, 3, 4, 5]",
                   "  %y: f32[2, 3, 7, 9] = aten.upsample_bilinear2d.default(self=%x, output_size=[7, 9], "
                   "align_corners=True, "
                   "scales_h=None, scales_w=None)\n  return (%y)\n"),
      spatial_case(
          "upsample_linear1d_vec", "f32[2, 3, 5]",
          "  %y: f32[2, 3, 10] = aten.upsample_linear1d.vec(input=%x, output_size=[10], align_corners=False, "
          "scale_factors=None)\n  return (%y)\n"),
      spatial_case("upsample_trilinear3d_vec", "f32[1, 2, 2, 3, 3]",
                   "  %y: f32[1, 2, 4, 6, 6] = aten.upsample_trilinear3d.vec(input=%x, output_size=None, "
                   "align_corners=True, "
                   "scale_factors=[2.0, 2.0, 2.0])\n  return (%y)\n"),
  };
}

KILN_CONVERTER_CASES(Spatial, spatial_cases);

}  // namespace
}  // namespace kiln::conversion::testing
