// Every bundled fixture (tests/data/<name>/ and tests/data/models/<name>/, both forms, every io_N) compiled for the
// cuda backend must match torch's outputs, and running the same module through CUDA graphs must give exactly what
// plain execution gives. GPU tests: they skip, saying why, where the cuda backend cannot be created (no GPU, a
// build without it); ctest runs them as kiln_e2e_gpu_tests (label gpu), not one by one (tests/e2e/suite.cmake).
//
// Tolerances: the CPU fixture test's (compile_fixtures_test.cpp): cosine >= 0.9999 and max abs <= 1e-3 against
// torch's fp32 outputs (the engines compute in fp32 -- TF32 stays off by default -- but sum in other orders than
// torch; the outputs are O(1)). CUDA-graph replay launches the very kernels of the plain run with the same
// parameters on the same plans, so its outputs are compared bit for bit.

#include <algorithm>
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "compiler/compile_test_util.h"
#include "kiln/compiler/compile.h"
#include "kiln/engine/backend.h"
#include "kiln/frontend/program.h"
#include "kiln/runtime/compiled_module.h"
#include "kiln/support/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

struct CudaCase {
  std::string model;             // path of the .pt2
  std::vector<std::string> ios;  // paths of its io_N.npz, sorted
  std::string label;
};

std::vector<CudaCase> cuda_cases() {
  std::vector<CudaCase> out;
  for (const fs::path& root : {fs::path(KILN_TEST_DATA_DIR), fs::path(KILN_TEST_DATA_DIR) / "models"}) {
    if (!fs::exists(root)) continue;
    for (const auto& dir : fs::directory_iterator(root)) {
      if (!dir.is_directory()) continue;
      std::vector<std::string> ios;
      for (const auto& f : fs::directory_iterator(dir.path())) {
        const std::string name = f.path().filename().string();
        if (name.rfind("io_", 0) == 0 && f.path().extension() == ".npz") ios.push_back(f.path().string());
      }
      std::sort(ios.begin(), ios.end());
      for (const char* model : {"model.pt2", "model_core_aten.pt2"}) {
        if (!fs::exists(dir.path() / model) || ios.empty()) continue;
        out.push_back({(dir.path() / model).string(), ios,
                       dir.path().filename().string() + "_" + fs::path(model).stem().string()});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const CudaCase& a, const CudaCase& b) { return a.label < b.label; });
  return out;
}

/// Why the cuda backend cannot be created here, or "" when it can (checked once).
const std::string& cuda_unavailable() {
  static const std::string why = [] {
    try {
      engine::create_backend("cuda");
      return std::string();
    } catch (const Error& e) {
      return std::string(e.message().empty() ? "creating the backend failed" : e.message());
    }
  }();
  return why;
}

#define KILN_SKIP_WITHOUT_CUDA()                                                                          \
  if (!cuda_unavailable().empty()) GTEST_SKIP() << "backend 'cuda' is not available here: " << cuda_unavailable()

std::shared_ptr<runtime::CompiledModule> compile_for_cuda(const std::string& model, compiler::CompileReport* report) {
  frontend::Program program = frontend::load_program(model);
  compiler::CompilationSettings settings;
  settings.backend = "cuda";
  return compiler::compile(program, settings, {}, report);
}

class CudaFixture : public ::testing::TestWithParam<CudaCase> {};

TEST_P(CudaFixture, MatchesTorch) {
  KILN_SKIP_WITHOUT_CUDA();
  const CudaCase& c = GetParam();
  compiler::CompileReport report;
  auto module = compile_for_cuda(c.model, &report);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->backend(), "cuda");
  EXPECT_GE(module->summary().engine_segments, 1u);
  EXPECT_TRUE(report.fallbacks.empty()) << report.to_string();
  const std::vector<size_t> users = module->user_output_indices();
  ASSERT_FALSE(users.empty());
  for (const std::string& io_path : c.ios) {
    SCOPED_TRACE(io_path);
    auto io = read_npz(io_path);
    std::vector<HostTensor> outputs = module->execute_host(testing_util::io_inputs(io));
    for (size_t k = 0; k < users.size(); ++k) {
      auto expected = io.find("output_" + std::to_string(k));
      ASSERT_NE(expected, io.end()) << c.label << " output_" << k;
      ASSERT_LT(users[k], outputs.size());
      auto closeness = testing_util::closeness(outputs[users[k]], expected->second);
      ASSERT_TRUE(closeness.same_shape) << c.label << " output_" << k << ": " << outputs[users[k]].describe()
                                        << " vs " << expected->second.describe();
      EXPECT_GE(closeness.cosine, 0.9999) << c.label << " output_" << k;
      EXPECT_LE(closeness.max_abs, 1e-3) << c.label << " output_" << k;
    }
  }
}

TEST_P(CudaFixture, CudaGraphReplayEqualsPlainExecution) {
  KILN_SKIP_WITHOUT_CUDA();
  const CudaCase& c = GetParam();
  auto module = compile_for_cuda(c.model, nullptr);
  ASSERT_NE(module, nullptr);
  // By default the engines with static input shapes run through CUDA graphs; plain execution first.
  size_t static_engines = 0;
  for (const runtime::EngineSegment& e : module->engines()) {
    bool fixed = true;
    for (const engine::Binding& b : e.plan->bindings())
      fixed = fixed && !b.data_dependent && (!b.is_input || std::find(b.dims.begin(), b.dims.end(), -1) == b.dims.end());
    static_engines += fixed ? 1 : 0;
  }
  EXPECT_EQ(module->cuda_graph_engines(), static_engines);
  module->set_static_shape_cuda_graphs(false);
  EXPECT_EQ(module->cuda_graph_engines(), 0u);
  std::vector<std::vector<HostTensor>> inputs, plain;
  for (const std::string& io_path : c.ios) {
    inputs.push_back(testing_util::io_inputs(read_npz(io_path)));
    plain.push_back(module->execute_host(inputs.back()));
  }
  // The same module (same plans and tactics) through CUDA graphs: the first call per input shape records, the
  // repeats replay; switching io files (other shapes or values) records again or replays with new contents.
  module->set_use_cuda_graphs(true);
  EXPECT_EQ(module->cuda_graph_engines(), module->engines().size());
  std::vector<size_t> order;
  for (size_t i = 0; i < inputs.size(); ++i) order.insert(order.end(), {i, i, i});
  order.push_back(0);
  order.push_back(0);
  for (size_t call = 0; call < order.size(); ++call) {
    const size_t i = order[call];
    SCOPED_TRACE("call " + std::to_string(call) + " on " + c.ios[i]);
    std::vector<HostTensor> got = module->execute_host(inputs[i]);
    ASSERT_EQ(got.size(), plain[i].size());
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].sizes(), plain[i][k].sizes()) << c.label << " output " << k;
      ASSERT_EQ(got[k].dtype(), plain[i][k].dtype()) << c.label << " output " << k;
      EXPECT_EQ(0, std::memcmp(got[k].data(), plain[i][k].data(), got[k].nbytes()))
          << c.label << " output " << k << ": CUDA-graph replay differs from plain execution";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaFixture, ::testing::ValuesIn(cuda_cases()),
                         [](const ::testing::TestParamInfo<CudaCase>& info) { return info.param.label; });

TEST(CudaFixtures, EveryBundledFixtureIsACase) {
  // 4 tiny fixtures (tiny_convnet and tiny_resnet also in Core ATen form) and BERT and T5-encoder in both forms.
  EXPECT_EQ(cuda_cases().size(), 10u);
}

}  // namespace
}  // namespace kiln
