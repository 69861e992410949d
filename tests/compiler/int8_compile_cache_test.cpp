// INT8 compiles and the caches, through compiler::compile on tiny_resnet (calibrated):
// - calibration_percentile reaches the calibrator: on calibration data with rare outliers a lower percentile
//   gives every tensor a range no wider and the input a much narrower one; a compile with another percentile
//   neither reads the calibration cache nor hits the engine cache of one with the first, and a compile with
//   the first percentile again hits both.

#include <algorithm>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "compiler/calibration_cache.h"
#include "compiler/compile_test_util.h"
#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/support/npz.h"

namespace kiln::compiler {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("kiln_int8_cache_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

CompilationSettings int8_settings(const std::string& dir) {
  CompilationSettings s;
  s.enabled_precisions = {DType::Float32, DType::Int8};
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
  const std::string dir = fresh_dir("percentile");
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

}  // namespace
}  // namespace kiln::compiler
