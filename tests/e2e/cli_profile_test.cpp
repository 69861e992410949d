// kiln bench --profile as a user types it: tiny_convnet (one engine segment and one PyTorch run: lgamma,
// forced to PyTorch by --torch-executed-ops) compiled to a .kiln, then benched with per-layer profiling. The
// expected rows come from the .kiln's own plans (loaded here), so they do not depend on which tactics timing
// picked: every engine layer is one row "<segment node>/<layer>" with its kind and tactic, the PyTorch run
// one "torch" row, and each was called once per profiled iteration.

#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_util.h"
#include "kiln/runtime/compiled_module.h"
#include "kiln/runtime/module_archive.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using namespace kiln::cli_test;  // NOLINT(google-build-using-namespace)

constexpr int kIters = 3;

struct ExpectedRow {
  std::string name, kind, tactic;
};

/// The engine layers of `module` as its profile names them.
std::vector<ExpectedRow> engine_rows(const runtime::CompiledModule& module) {
  std::vector<ExpectedRow> rows;
  for (const runtime::EngineSegment& e : module.engines()) {
    for (const engine::PlanLayerInfo& l : e.plan->layers()) {
      if (l.kind == engine::LayerKind::Constant) continue;  // profiled only when copied into an output
      rows.push_back({e.node + "/" + l.name, engine::layer_kind_name(l.kind), l.tactic});
    }
  }
  return rows;
}

/// The table line of the row named `name` (the name ends the line), or "".
std::string table_line(const std::string& out, const std::string& name) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > name.size() && line.compare(line.size() - name.size(), name.size(), name) == 0 &&
        line[line.size() - name.size() - 1] == ' ') {
      return line;
    }
  }
  return "";
}

class CliProfile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_cli_profile_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    module_path_ = (dir_ / "tiny_convnet.kiln").string();
    Result c = kiln("compile " + data("tiny_convnet/model.pt2") + " -o " + module_path_ +
                    " --no-cache --torch-executed-ops aten.lgamma.default");
    ASSERT_EQ(c.code, 0) << c.err;
    rows_ = engine_rows(*runtime::load(module_path_));
    ASSERT_FALSE(rows_.empty());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string bench(const std::string& flags) const {
    return "bench " + module_path_ + " --inputs " + data("tiny_convnet/io_0.npz") + " --iters " +
           std::to_string(kIters) + " --warmup 1 --threads 1 " + flags;
  }

  fs::path dir_;
  std::string module_path_;
  std::vector<ExpectedRow> rows_;
};

TEST_F(CliProfile, BenchPrintsOneRowPerLayerAndTheTorchRun) {
  const std::string json_path = (dir_ / "profile.json").string();
  Result r = kiln(bench("--profile --profile-json " + json_path));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("layer profile over 3 runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per kind:"), std::string::npos) << r.out;
  for (const ExpectedRow& row : rows_) {
    const std::string line = table_line(r.out, row.name);
    ASSERT_FALSE(line.empty()) << row.name << " has no row in:\n" << r.out;
    EXPECT_NE(line.find("  " + row.kind + " "), std::string::npos) << line;
    EXPECT_NE(line.find("  " + row.tactic + " "), std::string::npos) << line;
  }
  EXPECT_NE(table_line(r.out, "lgamma").find("torch"), std::string::npos) << "the PyTorch run's row:\n"
                                                                          << r.out;

  nlohmann::json j = nlohmann::json::parse(read_file(json_path));
  EXPECT_EQ(j["runs"].get<int>(), kIters);
  ASSERT_EQ(j["layers"].size(), rows_.size() + 1) << j.dump(2);
  double percent = 0.0;
  for (const auto& layer : j["layers"]) {
    EXPECT_EQ(layer["calls"].get<int>(), kIters) << layer.dump();
    EXPECT_GE(layer["ms_per_run"].get<double>(), 0.0) << layer.dump();
    percent += layer["percent"].get<double>();
  }
  // The percentages are shares of the layers' sum; 1e-6 covers the rounding of adding them up.
  EXPECT_NEAR(percent, 100.0, 1e-6);
  EXPECT_LE(j["layers_ms_per_run"].get<double>(), j["wall_ms_per_run"].get<double>());
}

TEST_F(CliProfile, BenchJsonCarriesTheProfile) {
  Result r = kiln(bench("--json --profile"));
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  ASSERT_TRUE(j.contains("profile")) << r.out;
  EXPECT_GT(j["kiln_ms_median"].get<double>(), 0.0);
  EXPECT_EQ(j["profile"]["layers"].size(), rows_.size() + 1);
  bool convolution = false;
  for (const auto& kind : j["profile"]["kinds"]) convolution = convolution || kind["kind"] == "convolution";
  EXPECT_TRUE(convolution) << j["profile"].dump(2);

  Result plain = kiln(bench("--json"));
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("profile"), std::string::npos) << "no profile without --profile";
}

}  // namespace
}  // namespace kiln
