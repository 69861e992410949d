// kiln compile --precision int8 --calibration as a user types it: the compile calibrates, says how many
// layers run in INT8, the module computes what torch does within the quantization noise (tiny_resnet, random
// weights: SQNR of the logits >= 20 dB, the bound), a second compile takes the ranges from the
// calibration cache, another calibrator or percentile calibrates again, and calibration data that does not
// fit the program or a percentile outside (0, 100] is a one-line InvalidInput error that leaves no file
// behind. A program with integer inputs (BERT's token ids and attention mask) calibrates on integer arrays
// (SQNR >= 20 dB against torch's outputs, the same bound). FP8 asked of the cpu backend calibrates and keeps
// every layer floating.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "e2e/cli_util.h"
#include "kiln/support/npz.h"
#include "scratch_dir.h"
#include "sqnr.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using namespace kiln::cli_test;  // NOLINT(google-build-using-namespace)

using kiln::test_files::scratch_dir;

// `batches` random-normal batches of tiny_resnet's 2x3x32x32 input, stacked in dim 0 under `name`.
std::string calibration_file(const fs::path& dir, const std::string& file, const std::string& name,
                             std::vector<int64_t> dims) {
  std::mt19937 rng(77);
  std::normal_distribution<float> normal;
  HostTensor t(DType::Float32, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, normal(rng));
  const std::string path = (dir / file).string();
  write_npz(path, {{name, t}});
  return path;
}

TEST(CliInt8, CalibratesOnceThenReusesTheRangesAndMatchesTorchWithinQuantizationNoise) {
  const fs::path dir = scratch_dir("cli_int8_calibrate");
  const std::string model = data("tiny_resnet/model.pt2");
  const std::string calib = calibration_file(dir, "calib.npz", "input_0", {16, 3, 32, 32});  // 8 batches
  const std::string flags = " --precision int8 --calibration " + calib + " --cache-dir " +
                            (dir / "cache").string() + " --timing-cache " + (dir / "timing.bin").string();
  const std::string out = (dir / "int8.kiln").string();
  Result first = kiln("compile " + model + " -o " + out + flags);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out.find("ranges calibrated now"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("int8: "), std::string::npos) << first.out;
  EXPECT_TRUE(fs::exists(dir / "cache" / "calibration"));

  const std::string outputs = (dir / "outputs.npz").string();
  Result run = kiln("run " + out + " --inputs " + data("tiny_resnet/io_0.npz") + " --outputs " + outputs);
  ASSERT_EQ(run.code, 0) << run.err;
  const HostTensor got = read_npz(outputs).at("output_0");
  const HostTensor want = read_npz(data("tiny_resnet/io_0.npz")).at("output_0");
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_GE(testing::sqnr_db(got, want), 20.0);

  Result second = kiln("compile " + model + " -o " + (dir / "again.kiln").string() + flags + " --verbose");
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.out.find("from the calibration cache (not calibrated again)"), std::string::npos)
      << second.out;
  EXPECT_NE(second.out.find("int8 ranges: calibration cache"), std::string::npos) << second.out;

  Result other =
      kiln("compile " + model + " -o " + (dir / "max.kiln").string() + flags + " --calibrator max");
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_NE(other.out.find("ranges calibrated now"), std::string::npos) << other.out;

  Result percentile = kiln("compile " + model + " -o " + (dir / "p99.kiln").string() + flags +
                           " --calibration-percentile 99.9");
  ASSERT_EQ(percentile.code, 0) << percentile.err;
  EXPECT_NE(percentile.out.find("ranges calibrated now"), std::string::npos) << percentile.out;
}

TEST(CliInt8, CalibratesAProgramWithTokenIdInputs) {
  const fs::path dir = scratch_dir("cli_int8_tokens");
  const std::string model = data("models/bert/model.pt2");
  const std::map<std::string, HostTensor> io = read_npz(data("models/bert/io_0.npz"));
  // Random token ids below the fixture's largest id and attention masks of ones, as int64: 20 rows, which
  // calibrate as batches of 8, 8 and 4
  // (dim 0 is dynamic, up to 8: the whole array would fall outside the profile).
  std::mt19937 rng(78);
  const HostTensor& ids = io.at("input_0");
  int64_t vocab = 1;
  for (int64_t i = 0; i < ids.numel(); ++i)
    vocab = std::max(vocab, static_cast<int64_t>(ids.get_as_double(i)) + 1);
  HostTensor calib_ids(DType::Int64, {20, ids.sizes()[1]}), calib_mask(DType::Int64, {20, ids.sizes()[1]});
  std::uniform_int_distribution<int64_t> token(0, vocab - 1);
  for (int64_t i = 0; i < calib_ids.numel(); ++i) {
    calib_ids.set_from_double(i, static_cast<double>(token(rng)));
    calib_mask.set_from_double(i, 1.0);
  }
  const std::string calib = (dir / "calib.npz").string();
  write_npz(calib, {{"input_0", calib_ids}, {"input_1", calib_mask}});
  const std::string out = (dir / "int8.kiln").string();
  Result compiled =
      kiln("compile " + model + " -o " + out + " --precision int8 --calibration " + calib + " --cache-dir " +
           (dir / "cache").string() + " --timing-cache " + (dir / "timing.bin").string());
  ASSERT_EQ(compiled.code, 0) << compiled.err;
  EXPECT_NE(compiled.out.find("ranges calibrated now"), std::string::npos) << compiled.out;
  const std::string outputs = (dir / "outputs.npz").string();
  Result run = kiln("run " + out + " --inputs " + data("models/bert/io_0.npz") + " --outputs " + outputs);
  ASSERT_EQ(run.code, 0) << run.err;
  const HostTensor got = read_npz(outputs).at("output_0");
  ASSERT_EQ(got.sizes(), io.at("output_0").sizes());
  EXPECT_GE(testing::sqnr_db(got, io.at("output_0")), 20.0);

  // Floating calibration data for an integer input is refused, naming the input.
  const std::string floats = calibration_file(dir, "floats.npz", "input_0", {16, ids.sizes()[1]});
  Result refused = kiln("compile " + model + " -o " + (dir / "bad.kiln").string() +
                        " --no-cache --precision int8 --calibration " + floats);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.err.find("calibration data of an integer input is integer"), std::string::npos)
      << refused.err;
  EXPECT_EQ(lines(refused.err), 1u) << refused.err;
  EXPECT_FALSE(fs::exists(dir / "bad.kiln"));
}

TEST(CliInt8, CalibrationDataThatDoesNotFitIsAOneLineError) {
  const fs::path dir = scratch_dir("cli_int8_bad");
  const std::string model = data("tiny_resnet/model.pt2");
  const std::string out = (dir / "bad.kiln").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {calibration_file(dir, "name.npz", "images", {4, 3, 32, 32}), "has neither 'input_0' nor"},
      {calibration_file(dir, "dims.npz", "input_0", {4, 3, 30, 32}), "has size 30 in dim 2"},
      {calibration_file(dir, "rows.npz", "input_0", {3, 3, 32, 32}), "not a positive multiple"},
      {calibration_file(dir, "rank.npz", "input_0", {4, 3, 32}), "has rank 3"},
  };
  for (const auto& [file, says] : cases) {
    Result r = kiln("compile " + model + " -o " + out + " --no-cache --precision int8 --calibration " + file);
    EXPECT_EQ(r.code, 2) << file << ": " << r.out;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  for (const std::string& p : {"0", "100.5", "nan", "1e999", "0x1p3", "5abc", "' 5'", "''"}) {
    Result r = kiln("compile " + model + " -o " + out + " --no-cache --precision int8 --calibration " +
                    cases[0].first + " --calibration-percentile " + p);
    EXPECT_EQ(r.code, 2) << p << ": " << r.out;
    EXPECT_NE(r.err.find("--calibration-percentile: expected a number in (0, 100], got '"), std::string::npos)
        << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  Result none = kiln("compile " + model + " -o " + out + " --no-cache --precision int8");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("int8 needs calibration data"), std::string::npos) << none.err;
  EXPECT_FALSE(fs::exists(out));
  Result fp8_none = kiln("compile " + model + " -o " + out + " --no-cache --precision fp16 fp8");
  EXPECT_EQ(fp8_none.code, 2);
  EXPECT_NE(fp8_none.err.find("fp8 needs calibration data"), std::string::npos) << fp8_none.err;
  EXPECT_EQ(lines(fp8_none.err), 1u) << fp8_none.err;
  EXPECT_FALSE(fs::exists(out));
  Result unknown = kiln("compile " + model + " -o " + out + " --no-cache --precision fp4");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("--precision 'fp4' is not one of fp32, fp16, bf16, int8, fp8"),
            std::string::npos)
      << unknown.err;
  EXPECT_FALSE(fs::exists(out));
}

// FP8 (cuda matmuls) asked of the cpu backend: calibrated like INT8 (the default calibrator "auto" is max for
// fp8: a compile naming max finds its ranges in the calibration cache, and the module records max), but the
// cpu has no FP8 tactic, so every layer stays floating and the module computes what the fp32 build does: the
// same kernels, up to the order of sums in tactics timed apart (max abs 1e-5 on O(1) logits).
TEST(CliInt8, Fp8OnTheCpuCalibratesAndKeepsEveryLayerFloating) {
  const fs::path dir = scratch_dir("cli_fp8_cpu");
  const std::string model = data("tiny_resnet/model.pt2");
  const std::string calib = calibration_file(dir, "calib.npz", "input_0", {4, 3, 32, 32});
  const std::string fp8 = (dir / "fp8.kiln").string(), fp32 = (dir / "fp32.kiln").string();
  const std::string flags = " --precision fp32 fp8 --calibration " + calib + " --cache-dir " +
                            (dir / "cache").string() + " --timing-cache " + (dir / "timing.bin").string();
  Result r = kiln("compile " + model + " -o " + fp8 + flags);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fp8: 0 of "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layers in FP8 (the others floating); ranges calibrated now"), std::string::npos)
      << r.out;
  Result max = kiln("compile " + model + " -o " + (dir / "max.kiln").string() + flags + " --calibrator max");
  ASSERT_EQ(max.code, 0) << max.err;
  EXPECT_NE(max.out.find("from the calibration cache (not calibrated again)"), std::string::npos) << max.out;
  Result inspect = kiln("inspect " + fp8 + " --json");
  ASSERT_EQ(inspect.code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("\"calibrator\": \"max\""), std::string::npos) << inspect.out.substr(0, 600);
  ASSERT_EQ(kiln("compile " + model + " -o " + fp32 + " --no-cache").code, 0);
  const std::string io = data("tiny_resnet/io_0.npz");
  const std::string out_fp8 = (dir / "out_fp8.npz").string(), out_fp32 = (dir / "out_fp32.npz").string();
  ASSERT_EQ(kiln("run " + fp8 + " --inputs " + io + " --outputs " + out_fp8).code, 0);
  ASSERT_EQ(kiln("run " + fp32 + " --inputs " + io + " --outputs " + out_fp32).code, 0);
  const HostTensor got = read_npz(out_fp8).at("output_0"), want = read_npz(out_fp32).at("output_0");
  ASSERT_EQ(got.sizes(), want.sizes());
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.get_as_double(i), want.get_as_double(i), 1e-5) << i;
}

}  // namespace
}  // namespace kiln
