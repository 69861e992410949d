// compiler::compile with sample inputs: softmax(x @ W) * 2 with x in [1, 2) and W near 1e4, whose logits pass
// fp16's 65504. An fp16 compile without samples gives NaN; with the sample the engine keeps the layers that
// overflow on it in fp32, says so in the report ("non-finite on sample input 0 in fp16"), and matches the
// fp32 compile within 1e-3 absolute (outputs in [0, 2]; only fp16 rounding of values near 1, 4.9e-4 relative,
// separates them). Where nothing overflows the samples change nothing.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/text.h"
#include "kiln/support/error.h"

namespace kiln::compiler {
namespace {

constexpr const char* kLogits = R"(graph(%x: f32[2, 8]) {
  %w: f32[8, 16] = parameter("proj.weight")
  %logits: f32[2, 16] = aten.mm.default(self=%x, mat2=%w)
  %p: f32[2, 16] = aten._softmax.default(self=%logits, dim=1, half_to_float=False)
  %y: f32[2, 16] = aten.mul.Tensor(self=%p, other=2)
  return (%y)
})";

frontend::Program logits_program(double scale) {
  frontend::Program program;
  program.graph = ir::parse_graph(kLogits);
  HostTensor w(DType::Float32, {8, 16});
  for (int64_t i = 0; i < w.numel(); ++i) w.set_from_double(i, scale + 0.1 * static_cast<double>(i % 16));
  program.graph->find_value("w")->set_data(w);
  program.output_kinds = {frontend::OutputKind::UserOutput};
  return program;
}

HostTensor sample() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> one_to_two(1.0, 2.0);
  HostTensor x(DType::Float32, {2, 8});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_from_double(i, one_to_two(rng));
  return x;
}

HostTensor run(const frontend::Program& program, const std::set<settings::Precision>& precisions,
               const std::vector<std::vector<HostTensor>>& samples, CompileReport* report = nullptr) {
  CompilationSettings settings;
  settings.enabled_precisions = precisions;
  settings.min_block_size = 1;  // the three nodes form one engine
  auto module = compile(program, settings, {}, report, nullptr, samples);
  return module->execute_host({sample()})[module->user_output_indices()[0]];
}

bool noted_overflow(const CompileReport& report) {
  for (const EngineBuildInfo& e : report.engines) {
    for (const engine::PrecisionNote& n : e.precision) {
      if (n.reason.find("non-finite on sample input 0 in fp16") != std::string::npos) return true;
    }
  }
  return false;
}

TEST(CompileSampleInputs, Fp16LayersThatOverflowOnTheSamplesStayFp32) {
  const frontend::Program program = logits_program(1e4);
  const HostTensor want = run(program, {settings::Precision::F32}, {});
  const HostTensor before = run(program, {settings::Precision::F32, settings::Precision::F16}, {});
  EXPECT_FALSE(std::isfinite(before.get_as_double(0))) << "without samples the fp16 logits overflow";
  CompileReport report;
  const HostTensor got = run(program, {settings::Precision::F32, settings::Precision::F16}, {{sample()}}, &report);
  EXPECT_TRUE(noted_overflow(report)) << report.to_string();
  ASSERT_EQ(report.engines.size(), 1u) << report.to_string();
  ASSERT_EQ(got.sizes(), want.sizes());
  for (int64_t i = 0; i < want.numel(); ++i) {
    ASSERT_TRUE(std::isfinite(want.get_as_double(i))) << i;
    EXPECT_NEAR(got.get_as_double(i), want.get_as_double(i), 1e-3) << i;
  }
}

TEST(CompileSampleInputs, SamplesNothingOverflowsOnChangeNothing) {
  const frontend::Program program = logits_program(1.0);
  CompileReport plain, checked;
  run(program, {settings::Precision::F32, settings::Precision::F16}, {}, &plain);
  run(program, {settings::Precision::F32, settings::Precision::F16}, {{sample()}}, &checked);
  EXPECT_FALSE(noted_overflow(checked)) << checked.to_string();
  ASSERT_EQ(plain.engines.size(), checked.engines.size());
  for (size_t e = 0; e < plain.engines.size(); ++e)
    EXPECT_EQ(plain.engines[e].precision.size(), checked.engines[e].precision.size());
}

TEST(CompileSampleInputs, ASampleOfTheWrongArityIsAnError) {
  CompilationSettings settings;
  settings.enabled_precisions = {settings::Precision::F32, settings::Precision::F16};
  EXPECT_THROW(compile(logits_program(1.0), settings, {}, nullptr, nullptr, {{sample(), sample()}}), Error);
}

}  // namespace
}  // namespace kiln::compiler
