// compiler::compile on a program made of the everyday ops that used to run in PyTorch (issue 16's table:
// swin_v2's F.normalize = linalg_vector_norm + clamp_min, zero_, maxvit's einsum and swapaxes) and the others
// of that list (roll, flip, clamp_max, fill_, erfinv, masked_select through the output allocator), in the
// training-IR form torch.export gives: the whole program must run in engines (no PyTorch segment), and match
// libtorch at two batch sizes, the data-dependent masked_select output included.

#include <gtest/gtest.h>

#include <random>

#include "compiler/compile_test_util.h"
#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/text.h"
#include "kiln/runtime/libtorch_node_executor.h"

namespace kiln::compiler {
namespace {

using testing_util::closeness;

constexpr const char* kProgram = R"(graph(%x: f32[s0, 8, 16]) {
  symbol s0 in [1, 16] hint 2
  %norm: f32[s0, 8, 1] = aten.linalg_vector_norm.default(self=%x, ord=2, dim=[-1], keepdim=True, *, dtype=None)
  %clamped: f32[s0, 8, 1] = aten.clamp_min.default(self=%norm, min=1e-12)
  %denom: f32[s0, 8, 16] = aten.expand_as.default(self=%clamped, other=%x)
  %q: f32[s0, 8, 16] = aten.div.Tensor(self=%x, other=%denom)
  %k: f32[s0, 16, 8] = aten.swapaxes.default(self=%q, axis0=1, axis1=2)
  %scores: f32[s0, 8, 8] = aten.einsum.default(equation="b i d, b d j -> b i j", tensors=[%q, %k], *, path=None)
  %buffer: f32[s0, 8, 8] = aten.clone.default(self=%scores, *, memory_format=None)
  %zeroed: f32[s0, 8, 8] = aten.zero_.default(self=%buffer)
  %bias: f32[s0, 8, 8] = aten.add.Tensor(self=%scores, other=%zeroed, *, alpha=1)
  %rolled: f32[s0, 8, 8] = aten.roll.default(self=%bias, shifts=[-3], dims=[2])
  %flipped: f32[s0, 8, 8] = aten.flip.default(self=%rolled, dims=[1])
  %capped: f32[s0, 8, 8] = aten.clamp_max.default(self=%flipped, max=0.9)
  %half: f32[s0, 8, 8] = aten.mul.Tensor(self=%capped, other=0.5)
  %inv: f32[s0, 8, 8] = aten.erfinv.default(self=%half)
  %filled: f32[s0, 8, 8] = aten.clone.default(self=%inv, *, memory_format=None)
  %ones: f32[s0, 8, 8] = aten.fill_.Scalar(self=%filled, value=0.25)
  %out: f32[s0, 8, 8] = aten.add.Tensor(self=%inv, other=%ones, *, alpha=1)
  %positive: bool[s0, 8, 16] = aten.gt.Scalar(self=%x, other=0.3)
  %picked: f32[u0] = aten.masked_select.default(self=%x, mask=%positive)
  return (%out, %picked)
})";

// Tolerance: cosine >= 0.9999 and max abs <= 1e-4 for the float chain (fp32 on both sides; the norm and the
// 16-term contraction sum in another order); masked_select copies values, so its shape and values must be
// equal.
TEST(CompileEverydayOps, IssueSixteenOpsRunInEnginesAndMatchTorch) {
  frontend::Program program;
  program.graph = ir::parse_graph(kProgram);
  program.output_kinds.assign(program.graph->outputs().size(), frontend::OutputKind::UserOutput);
  CompilationSettings settings;
  CompileReport report;
  auto module = compile(program, settings, {}, &report);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(report.torch_nodes, 0u) << report.to_string();
  EXPECT_TRUE(report.fallbacks.empty()) << report.to_string();
  std::mt19937 rng(16);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int64_t batch : {2, 5}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    HostTensor x(DType::Float32, {batch, 8, 16});
    for (int64_t i = 0; i < x.numel(); ++i) x.set_from_double(i, uniform(rng));
    const auto want = runtime::run_in_libtorch(*program.graph, {x});
    const auto got = module->execute_host({x});
    const std::vector<size_t> users = module->user_output_indices();
    ASSERT_EQ(users.size(), 2u);
    auto c = closeness(got[users[0]], want[0]);
    ASSERT_TRUE(c.same_shape);
    EXPECT_GE(c.cosine, 0.9999);
    EXPECT_LE(c.max_abs, 1e-4);
    const HostTensor& picked = got[users[1]];
    ASSERT_EQ(picked.sizes(), want[1].sizes());
    for (int64_t i = 0; i < picked.numel(); ++i)
      ASSERT_EQ(picked.get_as_double(i), want[1].get_as_double(i)) << i;
  }
}

}  // namespace
}  // namespace kiln::compiler
