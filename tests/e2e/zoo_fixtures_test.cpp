// The bundled zoo subset and higher-order-op fixtures (tests/data/zoo, tests/data/hops; exported with grad
// mode on as users export, see bench/zoo/export_ci.py and tools/export_fixtures.py): every one loads,
// compiles for the CPU (fp32, default settings), survives a .kiln round trip and matches eager PyTorch's
// outputs: cosine >= 0.9999 and max abs <= 1e-3 x the output's largest magnitude (the zoo's fp32 bar, issue
// 16: engine kernels sum in other orders than torch).

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "compiler/compile_test_util.h"
#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/segment.h"
#include "kiln/runtime/module_archive.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

struct ZooCase {
  std::string folder;  // tests/data/<group>/<name>
  std::string label;   // <group>_<name>
};

std::vector<ZooCase> zoo_cases() {
  std::vector<ZooCase> out;
  for (const char* group : {"zoo", "hops"}) {
    fs::path root = fs::path(KILN_TEST_DATA_DIR) / group;
    if (!fs::exists(root)) continue;
    for (const auto& dir : fs::directory_iterator(root)) {
      if (fs::exists(dir.path() / "model.pt2")) {
        out.push_back({dir.path().string(), std::string(group) + "_" + dir.path().filename().string()});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const ZooCase& a, const ZooCase& b) { return a.label < b.label; });
  return out;
}

void expect_zoo_matches(const runtime::CompiledModule& module, const std::string& io_path,
                        const std::string& label) {
  auto io = read_npz(io_path);
  std::vector<HostTensor> outputs = module.execute_host(testing_util::io_inputs(io));
  testing_util::expect_outputs_match(outputs, module.user_output_indices(), io, 0.9999, 1e-3, true,
                                     label + " " + io_path);
}

class ZooFixture : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ZooFixture, CompilesForTheCpuAndMatchesEagerFp32) {
  const ZooCase& c = GetParam();
  frontend::Program program = frontend::load_program(c.folder + "/model.pt2");
  compiler::CompileReport report;
  auto module = compiler::compile(program, compiler::CompilationSettings{}, {}, &report);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(report.fallbacks.empty()) << report.to_string();
  if (c.label.rfind("zoo_", 0) == 0) EXPECT_GE(module->summary().engine_segments, 1u) << c.label;
  // Higher-order ops run in PyTorch (their control flow in Kiln's runtime); the wrappers were inlined.
  for (const ir::Node* node : module->graph().nodes()) {
    if (ir::is_engine_segment(*node)) continue;
    EXPECT_NE(node->target().name, "wrap_with_set_grad_enabled") << c.label;
    EXPECT_NE(node->target().name, "wrap_with_autocast") << c.label;
  }
  for (const std::string& io : testing_util::io_files(c.folder)) expect_zoo_matches(*module, io, c.label);

  std::string path = (fs::temp_directory_path() / ("kiln_zoo_" + c.label + ".kiln")).string();
  runtime::save(*module, path);
  auto loaded = runtime::load(path);
  fs::remove(path);
  for (const std::string& io : testing_util::io_files(c.folder))
    expect_zoo_matches(*loaded, io, c.label + " (reloaded)");
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooFixture, ::testing::ValuesIn(zoo_cases()),
                         [](const ::testing::TestParamInfo<ZooCase>& info) { return info.param.label; });

}  // namespace
}  // namespace kiln
