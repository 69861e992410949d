// compiler::compile with fp16 enabled on values near 300, whose squares pass fp16's 65504:
// - an L2 normalization written out (pow 2, sum, add eps, rsqrt, mul): the precision policy keeps the
// squares,
//   the sum and its readers in fp32, and the compile report lists them with their reasons (an fp32 compile
//   lists none);
// - an RMS norm written as transformers writes it (pow 2, mean, ...): the lowering pass fuse_rms_norm makes
// it
//   one Normalization layer, whose statistics are fp32 inside the kernel.
// Both outputs are finite and match libtorch's fp32 within 1e-2 of their largest magnitude (the
// reduced-precision bound of the converter harness: fp16 keeps 11 significant bits).

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/text.h"
#include "kiln/runtime/libtorch_node_executor.h"

namespace kiln::compiler {
namespace {

/// x * rsqrt(REDUCE(x^2, -1, keepdim) + 1e-6) * w over [s0, 64], REDUCE "sum.dim_IntList" (an L2
/// normalization) or "mean.dim" (an RMS norm).
std::string norm_graph(const std::string& reduce) {
  return R"(graph(%x: f32[s0, 64]) {
  symbol s0 in [1, 8] hint 4
  %w: f32[64] = parameter("norm.weight")
  %sq: f32[s0, 64] = aten.pow.Tensor_Scalar(self=%x, exponent=2)
  %var: f32[s0, 1] = aten.)" +
         reduce + R"((self=%sq, dim=[-1], keepdim=True, *, dtype=None)
  %eps: f32[s0, 1] = aten.add.Tensor(self=%var, other=1e-06, *, alpha=1)
  %inv: f32[s0, 1] = aten.rsqrt.default(self=%eps)
  %normed: f32[s0, 64] = aten.mul.Tensor(self=%x, other=%inv)
  %y: f32[s0, 64] = aten.mul.Tensor(self=%w, other=%normed)
  return (%y)
})";
}
const std::string kL2Norm = norm_graph("sum.dim_IntList"), kRmsNorm = norm_graph("mean.dim");

struct Compiled {
  frontend::Program program;
  std::shared_ptr<runtime::CompiledModule> module;
  CompileReport report;
};

Compiled compile_norm(const std::string& graph, const std::set<settings::Precision>& precisions) {
  Compiled c;
  c.program.graph = ir::parse_graph(graph);
  HostTensor w(DType::Float32, {64});
  for (int64_t i = 0; i < 64; ++i) w.set_from_double(i, 0.5 + i / 64.0);
  c.program.graph->find_value("w")->set_data(w);
  c.program.output_kinds = {frontend::OutputKind::UserOutput};
  CompilationSettings settings;
  settings.enabled_precisions = precisions;
  settings.min_block_size = 1;  // (the fused RMS norm is one node)
  c.module = compile(c.program, settings, {}, &c.report);
  return c;
}

/// Runs `c` and libtorch's fp32 on values near +-300: the output is finite and within 1e-2 of the largest
/// magnitude.
void expect_finite_and_close(const Compiled& c) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> near300(250.0, 350.0);
  HostTensor x(DType::Float32, {3, 64});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_from_double(i, (i % 2 ? -1 : 1) * near300(rng));
  const HostTensor want = runtime::run_in_libtorch(*c.program.graph, {x})[0];
  const HostTensor got = c.module->execute_host({x})[c.module->user_output_indices()[0]];
  ASSERT_EQ(got.sizes(), want.sizes());
  double scale = 0, err = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    ASSERT_TRUE(std::isfinite(got.get_as_double(i))) << "element " << i;
    scale = std::max(scale, std::abs(want.get_as_double(i)));
    err = std::max(err, std::abs(got.get_as_double(i) - want.get_as_double(i)));
  }
  EXPECT_LE(err, 1e-2 * scale);
}

TEST(CompilePrecisionReport, Fp16SumOfSquaresKeepsItsStatisticsInFp32AndSaysWhy) {
  Compiled c = compile_norm(kL2Norm, {settings::Precision::F32, settings::Precision::F16});
  ASSERT_NE(c.module, nullptr);
  ASSERT_EQ(c.report.engines.size(), 1u) << c.report.to_string();
  const auto& notes = c.report.engines[0].precision;
  size_t fp32 = 0;
  for (const engine::PrecisionNote& n : notes) fp32 += n.reason.rfind("fp32", 0) == 0 ? 1 : 0;
  EXPECT_GE(fp32, 3u) << c.report.to_string();  // the square, the sum, the rsqrt chain reading it
  EXPECT_NE(c.report.to_string().find("  precision: "), std::string::npos) << c.report.to_string();
  expect_finite_and_close(c);
}

TEST(CompilePrecisionReport, Fp16RmsNormIsOneLayerWithFp32Statistics) {
  Compiled c = compile_norm(kRmsNorm, {settings::Precision::F32, settings::Precision::F16});
  ASSERT_NE(c.module, nullptr);
  ASSERT_EQ(c.report.engines.size(), 1u) << c.report.to_string();
  EXPECT_EQ(c.report.engine_nodes, 1u) << c.report.to_string();  // aten.rms_norm
  EXPECT_EQ(c.report.torch_nodes, 0u) << c.report.to_string();
  expect_finite_and_close(c);
}

TEST(CompilePrecisionReport, Fp32CompileDepartsFromNothing) {
  Compiled c = compile_norm(kL2Norm, {settings::Precision::F32});
  ASSERT_NE(c.module, nullptr);
  for (const EngineBuildInfo& e : c.report.engines) EXPECT_TRUE(e.precision.empty()) << c.report.to_string();
}

}  // namespace
}  // namespace kiln::compiler
