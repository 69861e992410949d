// Normalization converters against libtorch eager: layer norm (affine frozen / tensor / none), RMS norm
// (weight frozen / tensor / none, eps given / None), batch norm in both export forms, group norm; dynamic
// batch. (libtorch 1.13 has no rms_norm: there Kiln's builtin, runtime/builtin_compat.cpp, is the reference.)
// Tolerance: the harness default fp32 allclose(1e-4, 1e-5).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase normalization_case(const std::string& name, const std::string& in, const std::string& body,
                             std::vector<std::vector<std::vector<int64_t>>> runs) {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(" + in + ") {\n  symbol s0 in [1, 8] hint 2\n" + body + "}\n";
  c.c.runs = std::move(runs);
  return c;
}

CaseList normalization_cases() {
  return {
      normalization_case(
          "layer_norm", "%x: f32[s0, 5, 8]",
          "  %w: f32[8] = parameter(\"ln.weight\")\n  %b: f32[8] = parameter(\"ln.bias\")\n"
          "  %y: f32[s0, 5, 8] = aten.layer_norm.default(input=%x, normalized_shape=[8], weight=%w, bias=%b, "
          "eps=1e-05, cudnn_enable=False)\n  return (%y)\n",
          {{{2, 5, 8}}, {{6, 5, 8}}}),
      normalization_case(
          "layer_norm_two_dims_no_affine", "%x: f32[s0, 5, 8]",
          "  %y: f32[s0, 5, 8] = aten.layer_norm.default(input=%x, normalized_shape=[5, 8], weight=None, "
          "bias=None, eps=0.001, cudnn_enable=False)\n  return (%y)\n",
          {{{2, 5, 8}}, {{3, 5, 8}}}),
      normalization_case(
          "layer_norm_tensor_affine", "%x: f32[s0, 5, 8], %w: f32[8]",
          "  %y: f32[s0, 5, 8] = aten.layer_norm.default(input=%x, normalized_shape=[8], weight=%w, "
          "bias=None, eps=1e-05, cudnn_enable=False)\n  return (%y)\n",
          {{{2, 5, 8}, {8}}, {{4, 5, 8}, {8}}}),
      normalization_case(
          "native_layer_norm", "%x: f32[s0, 8]",
          "  %w: f32[8] = parameter(\"ln.weight\")\n  %b: f32[8] = parameter(\"ln.bias\")\n"
          "  %y: f32[s0, 8], %m: f32[s0, 1], %r: f32[s0, 1] = aten.native_layer_norm.default(input=%x, "
          "normalized_shape=[8], weight=%w, bias=%b, eps=1e-05)\n  return (%y)\n",
          {{{3, 8}}, {{7, 8}}}),
      normalization_case("rms_norm", "%x: f32[s0, 5, 8]",
                         "  %w: f32[8] = parameter(\"norm.weight\")\n"
                         "  %y: f32[s0, 5, 8] = aten.rms_norm.default(input=%x, normalized_shape=[8], "
                         "weight=%w, eps=1e-06)\n"
                         "  return (%y)\n",
                         {{{2, 5, 8}}, {{6, 5, 8}}}),
      normalization_case("rms_norm_two_dims_default_eps", "%x: f32[s0, 5, 8]",
                         "  %y: f32[s0, 5, 8] = aten.rms_norm.default(input=%x, normalized_shape=[5, 8], "
                         "weight=None, eps=None)\n"
                         "  return (%y)\n",
                         {{{2, 5, 8}}, {{3, 5, 8}}}),
      normalization_case("rms_norm_tensor_weight", "%x: f32[s0, 5, 8], %w: f32[8]",
                         "  %y: f32[s0, 5, 8] = aten.rms_norm.default(input=%x, normalized_shape=[8], "
                         "weight=%w, eps=1e-05)\n"
                         "  return (%y)\n",
                         {{{2, 5, 8}, {8}}, {{4, 5, 8}, {8}}}),
      normalization_case(
          "batch_norm", "%x: f32[s0, 4, 5, 6]",
          "  %w: f32[4] = parameter(\"bn.weight\")\n  %b: f32[4] = parameter(\"bn.bias\")\n"
          "  %m: f32[4] = buffer(\"bn.running_mean\")\n  %var: f32[4] = buffer(\"bn.running_var\")\n"
          "  %y: f32[s0, 4, 5, 6] = aten.batch_norm.default(input=%x, weight=%w, bias=%b, running_mean=%m, "
          "running_var=%var, training=False, momentum=0.1, eps=1e-05, cudnn_enabled=False)\n  return (%y)\n",
          {{{2, 4, 5, 6}}, {{3, 4, 5, 6}}}),
      normalization_case(
          "native_batch_norm_no_training", "%x: f32[s0, 4, 6]",
          "  %w: f32[4] = parameter(\"bn.weight\")\n  %b: f32[4] = parameter(\"bn.bias\")\n"
          "  %m: f32[4] = buffer(\"bn.running_mean\")\n  %var: f32[4] = buffer(\"bn.running_var\")\n"
          "  %y: f32[s0, 4, 6], %sm: f32[0], %sv: f32[0] = aten._native_batch_norm_legit_no_training.default("
          "input=%x, weight=%w, bias=%b, running_mean=%m, running_var=%var, momentum=0.1, eps=0.001)\n"
          "  return (%y)\n",
          {{{2, 4, 6}}, {{5, 4, 6}}}),
      normalization_case(
          "group_norm", "%x: f32[s0, 6, 4, 5]",
          "  %w: f32[6] = parameter(\"gn.weight\")\n  %b: f32[6] = parameter(\"gn.bias\")\n"
          "  %y: f32[s0, 6, 4, 5] = aten.group_norm.default(input=%x, num_groups=3, weight=%w, bias=%b, "
          "eps=1e-05, cudnn_enabled=True)\n  return (%y)\n",
          {{{2, 6, 4, 5}}, {{3, 6, 4, 5}}}),
      normalization_case(
          "native_group_norm", "%x: f32[2, 6, 10]",
          "  %w: f32[6] = parameter(\"gn.weight\")\n  %b: f32[6] = parameter(\"gn.bias\")\n"
          "  %y: f32[2, 6, 10], %m: f32[2, 2], %r: f32[2, 2] = aten.native_group_norm.default(input=%x, "
          "weight=%w, bias=%b, N=2, C=6, HxW=10, group=2, eps=1e-05)\n  return (%y)\n",
          {}),
  };
}

KILN_CONVERTER_CASES(Normalization, normalization_cases);

}  // namespace
}  // namespace kiln::conversion::testing
