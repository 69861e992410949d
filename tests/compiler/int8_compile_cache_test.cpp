// INT8 compiles and the caches, through compiler::compile on tiny_resnet (calibrated) and qdq_tiny_mlp
// (ranges from the program's quantize/dequantize nodes):
// - calibration_percentile reaches the calibrator: on calibration data with rare outliers a lower percentile
//   gives every tensor a range no wider and the input a much narrower one; a compile with another percentile
//   neither reads the calibration cache nor hits the engine cache of one with the first, and a compile with
//   the first percentile again hits both.
// - an engine-cache hit reports the INT8 summary a fresh build reports: where the ranges came from, each
//   layer's precision and the Q/DQ notes.

#include <algorithm>
#include <filesystem>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "compiler/calibration_cache.h"
#include "compiler/compile_test_util.h"
#include "kiln/compiler/compile.h"
#include "kiln/engine/backend.h"
#include "kiln/frontend/program.h"
#include "kiln/support/npz.h"
#include "scratch_dir.h"

namespace kiln::compiler {
namespace {

namespace fs = std::filesystem;

using kiln::test_files::scratch_dir;

CompilationSettings int8_settings(const std::string& dir) {
  CompilationSettings s;
  s.enabled_precisions = {settings::Precision::F32, settings::Precision::I8};
  s.engine_cache_dir = dir + "/engines";
  s.cache_built_engines = s.reuse_cached_engines = true;
  s.immutable_weights = false;
  s.timing_cache_path = dir + "/timing_cache.bin";
  return s;
}

// 8 batches of tiny_resnet's 2x3x32x32 input: standard normal values, and 1 in 2000 of them 40 (0.05%: inside
// 99.99%'s tail, outside 99%'s).
std::string calibration_with_outliers(const std::string& dir) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  HostTensor t(DType::Float32, {16, 3, 32, 32});
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, i % 2000 == 7 ? 40.0 : normal(rng));
  const std::string path = dir + "/calib.npz";
  write_npz(path, {{"input_0", t}});
  return path;
}

// The ranges of each calibration-cache entry in `dir`, by key.
std::map<std::string, detail::DynamicRanges> calibration_entries(const std::string& dir) {
  std::map<std::string, detail::DynamicRanges> out;
  if (!fs::exists(dir)) return out;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().extension() != ".kcal") continue;
    std::optional<detail::DynamicRanges> r = detail::load_calibration(dir, f.path().stem().string());
    if (r) out[f.path().stem().string()] = *r;
  }
  return out;
}

float amax(const engine::DynamicRange& r) { return std::max(std::fabs(r.min), std::fabs(r.max)); }

TEST(Int8CompileCache, ThePercentileChoosesTheRangesAndKeysBothCaches) {
  const std::string dir = scratch_dir("int8_cache_test_percentile").string();
  const frontend::Program program = frontend::load_program(testing_util::fixture("tiny_resnet"));
  CompilationSettings high = int8_settings(dir);
  high.calibration = calibration_with_outliers(dir);
  const std::string calibration_dir = detail::calibration_cache_dir(high);

  CompileReport first;
  ASSERT_NE(compile(program, high, {}, &first), nullptr);
  ASSERT_FALSE(first.engines.empty());
  for (const EngineBuildInfo& e : first.engines) EXPECT_EQ(e.calibration, "calibrated") << first.to_string();
  const auto after_first = calibration_entries(calibration_dir);
  ASSERT_EQ(after_first.size(), first.engines.size());

  CompilationSettings low = high;
  low.calibration_percentile = 99.0;
  CompileReport second;
  ASSERT_NE(compile(program, low, {}, &second), nullptr);
  for (const EngineBuildInfo& e : second.engines) {
    EXPECT_EQ(e.calibration, "calibrated") << "another percentile read the calibration cache";
    EXPECT_FALSE(e.cache_hit) << "another percentile hit the engine cache";
  }
  auto after_second = calibration_entries(calibration_dir);
  ASSERT_EQ(after_second.size(), 2 * first.engines.size());
  for (const auto& [key, ranges] : after_first) after_second.erase(key);
  ASSERT_EQ(after_second.size(), after_first.size());

  // Both percentiles read the same fp32 probe values: every range of the lower one is within the higher one's
  // (1e-5 relative for the histograms' float rounding), and the input's, where the outliers are, is < 1/4.
  const detail::DynamicRanges& wide = after_first.begin()->second;
  const detail::DynamicRanges& narrow = after_second.begin()->second;
  ASSERT_EQ(wide.size(), narrow.size());
  std::string input;  // the network input: the tensor whose 99.99% range ends at the outliers (40)
  for (const auto& [tensor, range] : wide) {
    ASSERT_TRUE(narrow.count(tensor)) << tensor;
    EXPECT_LE(amax(narrow.at(tensor)), amax(range) * (1 + 1e-5)) << tensor;
    if (input.empty() || std::fabs(amax(range) - 40) < std::fabs(amax(wide.at(input)) - 40)) input = tensor;
  }
  ASSERT_NEAR(amax(wide.at(input)), 40.0f, 0.1f) << "99.99% keeps the outliers";
  EXPECT_LT(amax(narrow.at(input)), 10.0f) << "99% clips them (|x| of a standard normal: 2.6 at 99%)";

  CompileReport third;
  ASSERT_NE(compile(program, high, {}, &third), nullptr);
  for (const EngineBuildInfo& e : third.engines) {
    EXPECT_EQ(e.calibration, "calibration cache");
    EXPECT_TRUE(e.cache_hit);
  }
}

// The lines of a report about INT8: "int8 ranges: ..." and each "layer NAME: PRECISION (TACTIC)".
std::vector<std::string> int8_lines(const CompileReport& report) {
  std::vector<std::string> out;
  std::istringstream in(report.to_string());
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  int8 ranges: ", 0) == 0 || line.rfind("  layer ", 0) == 0) out.push_back(line);
  }
  return out;
}

TEST(Int8CompileCache, ACacheHitReportsTheInt8SummaryOfTheBuild) {
  // The program's Q/DQ pairs fold into INT8 layers only where the CPU multiplies INT8 exactly (VNNI).
  if (std::string why; !engine::backend_runs_int8("cpu", &why)) GTEST_SKIP() << why;
  const std::string dir = scratch_dir("int8_cache_test_qdq_hit").string();
  const frontend::Program program =
      frontend::load_program(std::string(KILN_TEST_DATA_DIR) + "/qdq/qdq_tiny_mlp/model.pt2");
  const CompilationSettings settings = int8_settings(dir);
  CompileReport built, hit;
  ASSERT_NE(compile(program, settings, {}, &built), nullptr);
  ASSERT_NE(compile(program, settings, {}, &hit), nullptr);
  ASSERT_EQ(hit.engines.size(), built.engines.size());
  ASSERT_FALSE(built.engines.empty());
  size_t int8_layers = 0;
  for (size_t i = 0; i < built.engines.size(); ++i) {
    const EngineBuildInfo& b = built.engines[i];
    const EngineBuildInfo& h = hit.engines[i];
    EXPECT_FALSE(b.cache_hit);
    EXPECT_TRUE(h.cache_hit);
    EXPECT_EQ(b.calibration, "program Q/DQ");
    EXPECT_EQ(h.calibration, b.calibration);
    EXPECT_EQ(h.quantization, b.quantization);
    EXPECT_FALSE(h.quantization.empty());
    ASSERT_EQ(h.layers.size(), b.layers.size());
    for (size_t l = 0; l < b.layers.size(); ++l) {
      EXPECT_EQ(h.layers[l].layer, b.layers[l].layer);
      EXPECT_EQ(h.layers[l].precision, b.layers[l].precision);
      int8_layers += b.layers[l].precision == "int8" ? 1 : 0;
    }
  }
  EXPECT_GT(int8_layers, 0u) << built.to_string();
  EXPECT_EQ(int8_lines(hit), int8_lines(built)) << hit.to_string();
  EXPECT_NE(hit.to_string().find("  Q/DQ: "), std::string::npos) << hit.to_string();
}

}  // namespace
}  // namespace kiln::compiler
