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
#include "kiln/lowering/pass_manager.h"
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

// The tiny Llama (4 query heads over 2 key / value heads, rotary embeddings, RMS norms) lowers to what the
// engine runs fused: each attention reads the kv heads in place (repeat_kv read as enable_gqa), each
// rotate_half is one gather (its concatenation gone), each RMS norm one node. (Its values: the case above.)
TEST(ZooLlama, LowersToGroupedAttentionRotaryGathersAndRmsNorms) {
  frontend::Program program =
      frontend::load_program(std::string(KILN_TEST_DATA_DIR) + "/zoo/llama/model.pt2");
  ASSERT_TRUE(lowering::apply_lowering_passes(*program.graph));
  int gqa = 0, attention = 0, rotate = 0, norms = 0, cats = 0, expands = 0;
  for (const ir::Node* node : program.graph->nodes()) {
    const std::string op = node->target().to_string();
    if (op == "aten.scaled_dot_product_attention.default") {
      ++attention;
      const ir::Argument* g = node->find_arg("enable_gqa");
      gqa += g != nullptr && !g->is_none() && g->as_bool();
    }
    rotate += op == "aten.index_select.default";
    norms += op == "aten.rms_norm.default";
    if (op == "aten.cat.default") {  // rotate_half's: the negated half first (the cos / sin tables' stay)
      const ir::Value* first = node->arg("tensors").as_tensors().front();
      cats += first != nullptr && first->producer() != nullptr &&
              first->producer()->target().to_string() == "aten.neg.default";
    }
    expands += op == "aten.expand.default" && node->output(0)->meta().rank() == 5;  // repeat_kv's
  }
  EXPECT_EQ(attention, 2);
  EXPECT_EQ(gqa, 2);
  EXPECT_EQ(rotate, 4) << "q and k of two layers";
  EXPECT_EQ(norms, 5) << "two per layer and the final one";
  EXPECT_EQ(cats, 0) << "no rotate_half concatenation left";
  EXPECT_EQ(expands, 0) << "no key / value repeat left";
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooFixture, ::testing::ValuesIn(zoo_cases()),
                         [](const ::testing::TestParamInfo<ZooCase>& info) { return info.param.label; });

}  // namespace
}  // namespace kiln
