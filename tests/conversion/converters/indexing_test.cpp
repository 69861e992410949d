// Slicing/indexing converters against libtorch eager: slice (clamped, negative, stepped, dynamic extent),
// select, cat (with promotion), splits, index_select, gather, embedding, index.Tensor, constant_pad_nd (including
// negative pads). Data movement is exact; the harness tolerance is the default fp32 allclose(1e-4, 1e-5).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"

namespace kiln::conversion::testing {
namespace {

NamedCase indexing_case(const std::string& name, const std::string& inputs, const std::string& body,
                        std::vector<std::vector<std::vector<int64_t>>> runs = {},
                        std::map<size_t, InputFill> fills = {}) {
  return graph_case(name, inputs, "s0 in [2, 9] hint 4", body, std::move(runs), std::move(fills));
}

CaseList indexing_cases() {
  const std::string x = "%x: f32[s0, 5, 6]";
  const std::vector<std::vector<std::vector<int64_t>>> runs = {{{3, 5, 6}}, {{8, 5, 6}}};
  return {
      indexing_case(
          "slice_static_dim", x,
          "  %y: f32[s0, 3, 6] = aten.slice.Tensor(self=%x, dim=1, start=1, end=4, step=1)\n  return (%y)\n",
          runs),
      indexing_case("slice_step_clamped", x,
                    "  %y: f32[s0, 5, 2] = aten.slice.Tensor(self=%x, dim=2, start=-5, end=100, step=3)\n  "
                    "return (%y)\n",
                    runs),
      indexing_case("slice_dynamic_dim_to_end", x,
                    "  %y: f32[s0 - 1, 5, 6] = aten.slice.Tensor(self=%x, dim=0, start=1, "
                    "end=9223372036854775807, step=1)\n"
                    "  return (%y)\n",
                    runs),
      indexing_case("slice_dynamic_dim_negative_end", x,
                    "  %y: f32[s0 - 1, 5, 6] = aten.slice.Tensor(self=%x, dim=0, start=0, end=-1, step=2)\n  "
                    "return (%y)\n",
                    runs),
      indexing_case("select", x,
                    "  %y: f32[s0, 6] = aten.select.int(self=%x, dim=1, index=-2)\n  return (%y)\n", runs),
      indexing_case("select_dynamic_dim", x,
                    "  %y: f32[5, 6] = aten.select.int(self=%x, dim=0, index=1)\n  return (%y)\n", runs),
      indexing_case("cat", x + ", %z: f32[s0, 2, 6]",
                    "  %y: f32[s0, 7, 6] = aten.cat.default(tensors=[%x, %z], dim=1)\n  return (%y)\n",
                    {{{3, 5, 6}, {3, 2, 6}}, {{6, 5, 6}, {6, 2, 6}}}),
      indexing_case("concat_promotes", "%x: f32[2, 3], %z: i64[2, 2]",
                    "  %y: f32[2, 5] = aten.concat.default(tensors=[%x, %z], dim=-1)\n  return (%y)\n", {},
                    {{1, {-4, 4}}}),
      indexing_case("split_with_sizes", x,
                    "  %a: f32[s0, 2, 6], %b: f32[s0, 3, 6] = aten.split_with_sizes.default(self=%x, "
                    "split_sizes=[2, 3], "
                    "dim=1)\n  return (%a, %b)\n",
                    runs),
      indexing_case(
          "split", "%x: f32[4, 7]",
          "  %a: f32[4, 3], %b: f32[4, 3], %c: f32[4, 1] = aten.split.Tensor(self=%x, split_size=3, dim=1)\n"
          "  return (%a, %b, %c)\n"),
      indexing_case("chunk", "%x: f32[5, 2]",
                    "  %a: f32[3, 2], %b: f32[2, 2] = aten.chunk.default(self=%x, chunks=2, dim=0)\n  return "
                    "(%a, %b)\n"),
      indexing_case(
          "index_select", x + ", %i: i64[4]",
          "  %y: f32[s0, 4, 6] = aten.index_select.default(self=%x, dim=1, index=%i)\n  return (%y)\n",
          {{{3, 5, 6}, {4}}, {{6, 5, 6}, {4}}}, {{1, {0, 5}}}),
      indexing_case("gather", x + ", %i: i64[s0, 5, 2]",
                    "  %y: f32[s0, 5, 2] = aten.gather.default(self=%x, dim=2, index=%i, *, "
                    "sparse_grad=False)\n  return (%y)\n",
                    {{{3, 5, 6}, {3, 5, 2}}, {{6, 5, 6}, {6, 5, 2}}}, {{1, {0, 6}}}),
      indexing_case("embedding", "%i: i64[s0, 3]",
                    "  %w: f32[10, 4] = parameter(\"embed.weight\")\n"
                    "  %y: f32[s0, 3, 4] = aten.embedding.default(weight=%w, indices=%i, padding_idx=-1, "
                    "scale_grad_by_freq=False, sparse=False)\n  return (%y)\n",
                    {{{2, 3}}, {{5, 3}}}, {{0, {0, 10}}}),
      indexing_case(
          "index_tensor_dim1", x + ", %i: i64[2, 3]",
          "  %y: f32[s0, 2, 3, 6] = aten.index.Tensor(self=%x, indices=?[None, %i])\n  return (%y)\n",
          {{{3, 5, 6}, {2, 3}}, {{4, 5, 6}, {2, 3}}}, {{1, {-5, 5}}}),
      // An index of dynamic shape with negative entries (the linear index that the index.Tensor decomposition
      // builds for symbolic dims has the broadcast shape of the original indices).
      indexing_case(
          "index_tensor_dynamic_index", x + ", %i: i64[s0, 2]",
          "  %y: f32[s0, s0, 2, 6] = aten.index.Tensor(self=%x, indices=?[None, %i])\n  return (%y)\n",
          {{{3, 5, 6}, {3, 2}}, {{7, 5, 6}, {7, 2}}, {{2, 5, 6}, {2, 2}}}, {{1, {-5, 5}}}),
      indexing_case("constant_pad", x,
                    "  %y: f32[s0, 6, 9] = aten.constant_pad_nd.default(self=%x, pad=[1, 2, 0, 1], "
                    "value=0.5)\n  return (%y)\n",
                    runs),
      indexing_case("constant_pad_negative", "%x: f32[2, 5, 6]",
                    "  %y: f32[2, 5, 5] = aten.constant_pad_nd.default(self=%x, pad=[-2, 1], value=0.0)\n  "
                    "return (%y)\n"),
      indexing_case("stack", x + ", %z: f32[s0, 5, 6]",
                    "  %y: f32[s0, 2, 5, 6] = aten.stack.default(tensors=[%x, %z], dim=1)\n  return (%y)\n",
                    {{{3, 5, 6}, {3, 5, 6}}, {{6, 5, 6}, {6, 5, 6}}}),
      indexing_case("pad_reflect", "%x: f32[s0, 2, 5, 6]",
                    "  %y: f32[s0, 2, 7, 8] = aten.pad.default(self=%x, pad=[1, 1, 2, 0], mode=\"reflect\", "
                    "value=None)\n"
                    "  return (%y)\n",
                    {{{2, 2, 5, 6}}, {{3, 2, 5, 6}}}),
      indexing_case(
          "pad_constant_mode", "%x: f32[2, 5, 6]",
          "  %y: f32[2, 5, 9] = aten.pad.default(self=%x, pad=[1, 2], mode=\"constant\", value=1.5)\n"
          "  return (%y)\n"),
      indexing_case(
          "reflection_pad1d", "%x: f32[2, 3, 6]",
          "  %y: f32[2, 3, 9] = aten.reflection_pad1d.default(self=%x, padding=[2, 1])\n  return (%y)\n"),
      indexing_case("reflection_pad2d", "%x: f32[1, 2, 5, 6]",
                    "  %y: f32[1, 2, 7, 8] = aten.reflection_pad2d.default(self=%x, padding=[1, 1, 1, 1])\n  "
                    "return (%y)\n"),
      indexing_case(
          "replication_pad1d", "%x: f32[2, 3, 6]",
          "  %y: f32[2, 3, 9] = aten.replication_pad1d.default(self=%x, padding=[2, 1])\n  return (%y)\n"),
      indexing_case("replication_pad2d", "%x: f32[1, 2, 5, 6]",
                    "  %y: f32[1, 2, 8, 7] = aten.replication_pad2d.default(self=%x, padding=[0, 1, 2, 1])\n "
                    " return (%y)\n"),
      indexing_case(
          "repeat", x,
          "  %y: f32[s0, 10, 12, 2] = aten.repeat.default(self=%x, repeats=[1, 2, 2, 1])\n  return (%y)\n",
          runs),
  };
}

KILN_CONVERTER_CASES(Indexing, indexing_cases);

}  // namespace
}  // namespace kiln::conversion::testing
