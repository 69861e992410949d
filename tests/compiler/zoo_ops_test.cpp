// compiler::compile on programs made of the ops that kept zoo models partly in PyTorch
// (bench/zoo/results.jsonl, first run): wav2vec2's weight-normed grouped positional convolution (_weight_norm
// of parameters, folded into the convolution's weight), transformers' diff, digamma, phi's attention mask
// sliced to the key length (a SymInt end equal to the dim), and swin_t's as_strided (a movement of a
// contiguous input; an overlapping window stays in PyTorch). Each must run in engines (no PyTorch node,
// except the overlapping window) and match libtorch at two shapes.

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

constexpr const char* kZooProgram = R"(graph(%x: f32[s0, 8, s1], %mask: f32[s0, 1, s1, s1]) {
  symbol s0 in [1, 8] hint 2
  symbol s1 in [3, 16] hint 6
  %v: f32[8, 4, 3] = parameter("pos_conv.weight_v")
  %g: f32[1, 1, 3] = parameter("pos_conv.weight_g")
  %b: f32[8] = parameter("pos_conv.bias")
  %n: sym_int(s1) = aten.sym_size.int(self=%x, dim=2)
  %w: f32[8, 4, 3] = aten._weight_norm.default(v=%v, g=%g, dim=2)
  %conv: f32[s0, 8, s1] = aten.convolution.default(input=%x, weight=%w, bias=%b, stride=[1], padding=[1], dilation=[1], transposed=False, output_padding=[0], groups=2)
  %d: f32[s0, 8, s1 - 1] = aten.diff.default(self=%conv, n=1, dim=-1, prepend=None, append=None)
  %pos: f32[s0, 8, s1 - 1] = aten.abs.default(self=%d)
  %shift: f32[s0, 8, s1 - 1] = aten.add.Tensor(self=%pos, other=0.25, *, alpha=1)
  %out: f32[s0, 8, s1 - 1] = aten.special_digamma.default(self=%shift)
  %m: f32[s0, 1, s1, s1] = aten.slice.Tensor(self=%mask, dim=3, start=0, end=%n, step=1)
  %scores: f32[s0, 1, s1, s1] = aten.softmax.int(self=%m, dim=-1, dtype=None)
  return (%out, %scores)
})";

HostTensor random(DType dtype, std::vector<int64_t> sizes, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  HostTensor t(dtype, std::move(sizes));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, uniform(rng));
  return t;
}

// Tolerance: cosine >= 0.9999 and max abs <= 1e-4 relative to the largest magnitude (fp32 on both sides: a
// 12-term convolution summed in another order, the difference of neighbours, a digamma series with
// ~1e-6 relative error, a softmax).
TEST(CompileZooOps, WeightNormDiffDigammaAndMaskSliceRunInEngines) {
  frontend::Program program;
  program.graph = ir::parse_graph(kZooProgram);
  std::mt19937 rng(16);
  for (const char* name : {"v", "g", "b"}) {
    ir::Value* p = program.graph->find_value(name);
    p->set_data(random(DType::Float32, *p->meta().static_sizes(), rng));
  }
  program.output_kinds.assign(program.graph->outputs().size(), frontend::OutputKind::UserOutput);
  CompilationSettings settings;
  CompileReport report;
  auto module = compile(program, settings, {}, &report);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(report.torch_nodes, 0u) << report.to_string();
  EXPECT_TRUE(report.fallbacks.empty()) << report.to_string();
  for (auto [batch, seq] : std::vector<std::pair<int64_t, int64_t>>{{2, 6}, {5, 13}}) {
    SCOPED_TRACE("batch " + std::to_string(batch) + ", sequence " + std::to_string(seq));
    const std::vector<HostTensor> inputs = {random(DType::Float32, {batch, 8, seq}, rng),
                                            random(DType::Float32, {batch, 1, seq, seq}, rng)};
    const auto want = runtime::run_in_libtorch(*program.graph, inputs);
    const auto got = module->execute_host(inputs);
    const std::vector<size_t> users = module->user_output_indices();
    ASSERT_EQ(users.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      auto c = closeness(got[users[k]], want[k]);
      ASSERT_TRUE(c.same_shape) << "output " << k;
      double scale = 0;
      for (int64_t i = 0; i < want[k].numel(); ++i)
        scale = std::max(scale, std::abs(want[k].get_as_double(i)));
      EXPECT_GE(c.cosine, 0.9999) << "output " << k;
      EXPECT_LE(c.max_abs, 1e-4 * scale) << "output " << k;
    }
  }
}

constexpr const char* kStridedProgram = R"(graph(%x: f32[2, 4, 6]) {
  %r: f32[2, 4, 6] = aten.relu.default(self=%x)
  %view: f32[2, 3, 4] = aten.as_strided.default(self=%r, size=[2, 3, 4], stride=[24, 1, 6], storage_offset=0)
  %y: f32[2, 3, 4] = aten.mul.Tensor(self=%view, other=2.0)
  %windows: f32[2, 2, 4] = aten.as_strided.default(self=%r, size=[2, 2, 4], stride=[24, 2, 1], storage_offset=1)
  return (%y, %windows)
})";

// as_strided copies elements: the outputs must equal libtorch's exactly. The transposed window is a movement;
// the overlapping one (rows of 4 starting 2 apart) is not and runs in PyTorch.
TEST(CompileZooOps, AsStridedMovementRunsInEnginesOverlappingWindowsInPyTorch) {
  frontend::Program program;
  program.graph = ir::parse_graph(kStridedProgram);
  program.output_kinds.assign(program.graph->outputs().size(), frontend::OutputKind::UserOutput);
  CompilationSettings settings;
  settings.min_block_size = 1;
  CompileReport report;
  auto module = compile(program, settings, {}, &report);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(report.torch_nodes, 1u) << report.to_string();
  std::mt19937 rng(5);
  const std::vector<HostTensor> inputs = {random(DType::Float32, {2, 4, 6}, rng)};
  const auto want = runtime::run_in_libtorch(*program.graph, inputs);
  const auto got = module->execute_host(inputs);
  const std::vector<size_t> users = module->user_output_indices();
  ASSERT_EQ(users.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const HostTensor& g = got[users[k]];
    ASSERT_EQ(g.sizes(), want[k].sizes()) << "output " << k;
    for (int64_t i = 0; i < g.numel(); ++i)
      ASSERT_EQ(g.get_as_double(i), want[k].get_as_double(i)) << k << ": " << i;
  }
}

}  // namespace
}  // namespace kiln::compiler
