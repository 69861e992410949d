// View/layout converters against libtorch eager: reshapes with static and symbolic target shapes (SymInts from
// sym_size and SymInt arithmetic), permutes and the transpose family (swapaxes, swapdims, movedim, moveaxis, t,
// adjoint, mT, mH, matrix_H, numpy_T), squeezes, flatten/unflatten, expand, copies and casts,
// pixel_shuffle. Data movement is exact; the harness tolerance is the default fp32 allclose(1e-4, 1e-5).

#include <gtest/gtest.h>

#include "conversion/converter_harness.h"
#include "kiln/ir/text.h"
#include "kiln/support/error.h"

namespace kiln::conversion::testing {
namespace {

const char* kSym = "  symbol s0 in [1, 8] hint 2\n";

NamedCase shuffle_case(const std::string& name, const std::string& body, std::vector<int64_t> a,
                       std::vector<int64_t> b, const std::string& in = "f32[s0, 4, 6]") {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(%x: " + in + ") {\n" + kSym + body + "}\n";
  c.c.runs = {{a}, {b}};
  return c;
}

NamedCase stat(const std::string& name, const std::string& in, const std::string& call, const std::string& out) {
  NamedCase c;
  c.name = name;
  c.c.ir = one_op(in, call, out);
  return c;
}

CaseList shuffle_cases() {
  return {
      shuffle_case("reshape_symbolic",
                   "  %n: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)\n"
                   "  %y: f32[s0, 24] = aten.reshape.default(self=%x, shape=[%n, 24])\n  return (%y)\n",
                   {2, 4, 6}, {5, 4, 6}),
      shuffle_case("reshape_symbolic_product",
                   "  %n: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)\n"
                   "  %m: sym_int(4*s0) = _operator.mul(a=%n, b=4)\n"
                   "  %y: f32[4*s0, 6] = aten.reshape.default(self=%x, shape=[%m, 6])\n  return (%y)\n",
                   {3, 4, 6}, {7, 4, 6}),
      shuffle_case("reshape_infer",
                   "  %y: f32[s0, 2, 12] = aten.reshape.default(self=%x, shape=[-1, 2, 12])\n  return (%y)\n",
                   {2, 4, 6}, {3, 4, 6}),
      shuffle_case("view", "  %y: f32[s0, 24] = aten.view.default(self=%x, size=[-1, 24])\n  return (%y)\n",
                   {2, 4, 6}, {4, 4, 6}),
      stat("unsafe_view", "f32[2, 4, 6]", "aten._unsafe_view.default(self=%x, size=[8, 6])", "f32[8, 6]"),
      shuffle_case("permute",
                   "  %y: f32[6, s0, 4] = aten.permute.default(self=%x, dims=[2, 0, 1])\n  return (%y)\n",
                   {2, 4, 6}, {3, 4, 6}),
      shuffle_case("transpose",
                   "  %y: f32[s0, 6, 4] = aten.transpose.int(self=%x, dim0=-1, dim1=1)\n  return (%y)\n",
                   {2, 4, 6}, {3, 4, 6}),
      stat("t", "f32[3, 5]", "aten.t.default(self=%x)", "f32[5, 3]"),
      stat("t_vector", "f32[5]", "aten.t.default(self=%x)", "f32[5]"),
      shuffle_case("swapaxes",
                   "  %y: f32[6, 4, s0] = aten.swapaxes.default(self=%x, axis0=0, axis1=-1)\n  return (%y)\n",
                   {2, 4, 6}, {3, 4, 6}),
      shuffle_case("swapdims",
                   "  %y: f32[s0, 6, 4] = aten.swapdims.default(self=%x, dim0=2, dim1=1)\n  return (%y)\n",
                   {2, 4, 6}, {3, 4, 6}),
      shuffle_case(
          "movedim_int",
          "  %y: f32[4, 6, s0] = aten.movedim.int(self=%x, source=0, destination=-1)\n  return (%y)\n",
          {2, 4, 6}, {3, 4, 6}),
      stat("movedim_intlist", "f32[2, 3, 4, 5]",
           "aten.movedim.intlist(self=%x, source=[3, 0], destination=[0, 2])", "f32[5, 3, 2, 4]"),
      stat("moveaxis_int", "f32[2, 3, 4]", "aten.moveaxis.int(self=%x, source=-1, destination=0)",
           "f32[4, 2, 3]"),
      stat("moveaxis_intlist", "f32[2, 3, 4, 5]",
           "aten.moveaxis.intlist(self=%x, source=[1, 2], destination=[3, 0])", "f32[4, 2, 5, 3]"),
      shuffle_case("adjoint", "  %y: f32[s0, 6, 4] = aten.adjoint.default(self=%x)\n  return (%y)\n",
                   {2, 4, 6}, {3, 4, 6}),
      stat("mT", "f32[2, 3, 4]", "aten.mT.default(self=%x)", "f32[2, 4, 3]"),
      stat("mH", "f32[3, 4]", "aten.mH.default(self=%x)", "f32[4, 3]"),
      stat("matrix_H", "f32[3, 4]", "aten.matrix_H.default(self=%x)", "f32[4, 3]"),
      stat("numpy_T", "f32[2, 3, 4]", "aten.numpy_T.default(self=%x)", "f32[4, 3, 2]"),
      shuffle_case("unsqueeze",
                   "  %y: f32[s0, 4, 1, 6] = aten.unsqueeze.default(self=%x, dim=2)\n  return (%y)\n",
                   {2, 4, 6}, {3, 4, 6}),
      shuffle_case("unsqueeze_last",
                   "  %y: f32[s0, 4, 6, 1] = aten.unsqueeze.default(self=%x, dim=-1)\n  return (%y)\n",
                   {2, 4, 6}, {3, 4, 6}),
      shuffle_case("squeeze_dim", "  %y: f32[s0, 6] = aten.squeeze.dim(self=%x, dim=1)\n  return (%y)\n",
                   {2, 1, 6}, {3, 1, 6}, "f32[s0, 1, 6]"),
      shuffle_case("squeeze_dim_not_one",
                   "  %y: f32[s0, 4, 6] = aten.squeeze.dim(self=%x, dim=1)\n  return (%y)\n", {2, 4, 6},
                   {3, 4, 6}),
      stat("squeeze_dims", "f32[1, 3, 1, 2]", "aten.squeeze.dims(self=%x, dim=[0, 2])", "f32[3, 2]"),
      stat("squeeze_all", "f32[1, 3, 1, 2]", "aten.squeeze.default(self=%x)", "f32[3, 2]"),
      shuffle_case(
          "flatten",
          "  %y: f32[s0, 24] = aten.flatten.using_ints(self=%x, start_dim=1, end_dim=-1)\n  return (%y)\n",
          {2, 4, 6}, {3, 4, 6}),
      shuffle_case(
          "flatten_all",
          "  %y: f32[24*s0] = aten.flatten.using_ints(self=%x, start_dim=0, end_dim=-1)\n  return (%y)\n",
          {2, 4, 6}, {3, 4, 6}),
      shuffle_case(
          "unflatten",
          "  %y: f32[s0, 2, 2, 6] = aten.unflatten.int(self=%x, dim=1, sizes=[2, -1])\n  return (%y)\n",
          {2, 4, 6}, {3, 4, 6}),
      shuffle_case("expand",
                   "  %y: f32[s0, 4, 6] = aten.expand.default(self=%x, size=[-1, 4, 6], *, implicit=False)\n"
                   "  return (%y)\n",
                   {2, 1, 6}, {3, 1, 6}, "f32[s0, 1, 6]"),
      stat("expand_new_dims", "f32[3, 1]", "aten.expand.default(self=%x, size=[2, 3, 4], *, implicit=False)",
           "f32[2, 3, 4]"),
      stat("expand_gqa_heads", "f16[2, 2, 1, 5, 4]",
           "aten.expand.default(self=%x, size=[2, 2, 3, 5, 4], *, implicit=False)", "f16[2, 2, 3, 5, 4]"),
      stat("expand_bool", "bool[1, 4]", "aten.expand.default(self=%x, size=[3, 4], *, implicit=False)",
           "bool[3, 4]"),
      shuffle_case("contiguous",
                   "  %y: f32[s0, 4, 6] = aten.contiguous.default(self=%x, *, "
                   "memory_format=memory_format.contiguous)\n"
                   "  return (%y)\n",
                   {2, 4, 6}, {3, 4, 6}),
      shuffle_case(
          "clone",
          "  %y: f32[s0, 4, 6] = aten.clone.default(self=%x, *, memory_format=None)\n  return (%y)\n",
          {2, 4, 6}, {3, 4, 6}),
      shuffle_case("alias", "  %y: f32[s0, 4, 6] = aten.alias.default(self=%x)\n  return (%y)\n", {2, 4, 6},
                   {3, 4, 6}),
      shuffle_case("detach", "  %y: f32[s0, 4, 6] = aten.detach.default(self=%x)\n  return (%y)\n", {2, 4, 6},
                   {3, 4, 6}),
      shuffle_case(
          "to_copy_int",
          "  %y: i64[s0, 4, 6] = aten._to_copy.default(self=%x, *, dtype=dtype.i64)\n  return (%y)\n",
          {2, 4, 6}, {3, 4, 6}),
      shuffle_case("to_dtype_f16",
                   "  %y: f16[s0, 4, 6] = aten.to.dtype(self=%x, dtype=dtype.f16, non_blocking=False, "
                   "copy=False, memory_format=None)\n  return (%y)\n",
                   {2, 4, 6}, {3, 4, 6}),
      shuffle_case("pixel_shuffle",
                   "  %y: f32[s0, 2, 6, 4] = aten.pixel_shuffle.default(self=%x, upscale_factor=2)\n"
                   "  return (%y)\n",
                   {2, 8, 3, 2}, {3, 8, 3, 2}, "f32[s0, 8, 3, 2]"),
  };
}

KILN_CONVERTER_CASES(Shuffle, shuffle_cases);

// torch refuses -1 for a dim expand adds in front: so does the converter, naming the node.
TEST(ShuffleConverters, ExpandRefusesMinusOneForANewDim) {
  auto g = ir::parse_graph(
      "graph(%x: f32[3, 4]) {\n  %y: f32[2, 3, 4] = aten.expand.default(self=%x, size=[-1, 3, 4], *, "
      "implicit=False)\n"
      "  return (%y)\n}\n");
  settings::CompilationSettings s;
  try {
    Interpreter(*g, s).run();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("new leading dim 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::conversion::testing
