// Programs with quantize/dequantize nodes (tests/data/qdq: PT2E's quantized_decomposed form and
// ModelOpt-style fake quantization of tiny_resnet and tiny_mlp, exported with torch 2.11) through `kiln
// compile` and `kiln run`:
//
// - int8, no calibration data: every Q/DQ pair folds into a dynamic range, no layer of the plan comes from a
//   quantize/dequantize node, every convolution and matmul runs INT8, and the outputs match the Q/DQ
//   program's (output_0 of io_0.npz). Tolerance: the INT8 kernels compute what the program computes (the
//   same integers, the same scales), so what is left is fp32 rounding (1-2e-7 measured, SQNR > 120 dB) and
//   rounding ties that another summation order decides the other way (oneDNN's exact s32 sums against
//   torch's fp32 sums of dequantized values; also the s8 bound -127 against the program's -128). One such
//   flip of one element before the last layer moves the logits by a step times a weight, about 0.1% of their
//   range (60 dB): SQNR >= 50 dB allows a few. (None at these inputs: max error 1.5e-7.)
// - fp32: nothing folds (the compile names the reason), the Q/DQ nodes run as torch's arithmetic and the
//   outputs equal the program's within fp32 summation-order noise (atol 1e-4 on logits of magnitude ~1-10;
//   a rounding flip would show as a whole step, >= 4e-3 here, and fail).

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_util.h"
#include "kiln/engine/backend.h"
#include "kiln/support/npz.h"
#include "scratch_dir.h"
#include "sqnr.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using namespace kiln::cli_test;  // NOLINT(google-build-using-namespace)

const std::vector<std::string> kFixtures = {"qdq_tiny_resnet", "fq_tiny_resnet", "qdq_tiny_mlp",
                                            "fq_tiny_mlp"};

using kiln::test_files::scratch_dir;

// Compiles `fixture` with `flags` into dir/out.kiln and runs it on io_0.npz: (compile stdout, output_0).
std::pair<std::string, HostTensor> compile_and_run(const fs::path& dir, const std::string& fixture,
                                                   const std::string& flags) {
  const std::string module = (dir / (fixture + ".kiln")).string();
  Result c = kiln("compile " + data("qdq/" + fixture + "/model.pt2") + " -o " + module + " --timing-cache " +
                  (dir / "timing.bin").string() + flags);
  EXPECT_EQ(c.code, 0) << c.err;
  const std::string outputs = (dir / (fixture + "_out.npz")).string();
  Result r =
      kiln("run " + module + " --inputs " + data("qdq/" + fixture + "/io_0.npz") + " --outputs " + outputs);
  EXPECT_EQ(r.code, 0) << r.err;
  if (c.code != 0 || r.code != 0) return {c.out, HostTensor()};
  return {c.out, read_npz(outputs).at("output_0")};
}

double program_sqnr_vs_fp32(const std::string& fixture) {
  nlohmann::json meta = nlohmann::json::parse(read_file(data("qdq/" + fixture + "/meta.json")));
  return meta["sqnr_db_vs_fp32"][0].get<double>();
}

// Why this CPU's INT8 kernels are not exact (no VNNI: the INT8 tactics refuse and Q/DQ pairs stay
// arithmetic), or
// "" where they are.
std::string int8_inexact_reason() {
  std::string why;
  return engine::backend_runs_int8("cpu", &why) ? "" : why;
}

// The outputs of the Q/DQ program's arithmetic run in fp32: within 1e-4 of the program's.
void expect_the_programs_outputs(const HostTensor& got, const std::string& fixture) {
  const HostTensor want = read_npz(data("qdq/" + fixture + "/io_0.npz")).at("output_0");
  ASSERT_EQ(got.sizes(), want.sizes());
  for (int64_t i = 0; i < want.numel(); ++i)
    EXPECT_NEAR(got.get_as_double(i), want.get_as_double(i), 1e-4) << "element " << i;
}

TEST(CliQdq, Int8FoldsEveryQdqPairAndMatchesTheProgram) {
  if (const std::string why = int8_inexact_reason(); !why.empty()) GTEST_SKIP() << why;
  const fs::path dir = scratch_dir("cli_qdq_int8");
  for (const std::string& fixture : kFixtures) {
    SCOPED_TRACE(fixture);
    auto [out, got] = compile_and_run(dir, fixture, " --precision int8");
    ASSERT_TRUE(got.defined());
    EXPECT_NE(out.find("ranges from the program's quantize/dequantize nodes"), std::string::npos) << out;
    EXPECT_EQ(out.find("fake-quant arithmetic"), std::string::npos) << out;
    const size_t at = out.find("Q/DQ: ");
    ASSERT_NE(at, std::string::npos) << out;
    int folded = 0, total = 0;
    ASSERT_EQ(std::sscanf(out.c_str() + at, "Q/DQ: %d of %d", &folded, &total), 2) << out;
    EXPECT_GT(total, 0);
    EXPECT_EQ(folded, total) << out;

    // The plan: no layer made from a quantize/dequantize node, every convolution and matmul INT8.
    Result inspect = kiln("inspect " + (dir / (fixture + ".kiln")).string() + " --json");
    ASSERT_EQ(inspect.code, 0) << inspect.err;
    const nlohmann::json j = nlohmann::json::parse(inspect.out);
    for (const nlohmann::json& e : j["engines"]) {
      for (const nlohmann::json& l : e["layers"]) {
        const std::string name = l["name"].get<std::string>();
        EXPECT_EQ(name.find("quantize"), std::string::npos) << name;
        if (l["kind"] == "convolution" || l["kind"] == "matrix_multiply")
          EXPECT_EQ(l["tactic"], "onednn_int8") << name;
      }
    }

    const auto io = read_npz(data("qdq/" + fixture + "/io_0.npz"));
    const HostTensor& want = io.at("output_0");
    ASSERT_EQ(got.sizes(), want.sizes());
    const double sqnr = testing::sqnr_db(got, want);
    EXPECT_GE(sqnr, 50.0) << "against the Q/DQ program";
    std::cout << fixture << ": int8 SQNR vs the Q/DQ program " << sqnr << " dB (program vs fp32 "
              << program_sqnr_vs_fp32(fixture) << " dB), vs fp32 "
              << testing::sqnr_db(got, io.at("fp32_output_0")) << " dB\n";
  }
}

// `kiln refit` of the INT8 module with its own program (the weights go through lowering's folding again)
// gives the same outputs: within the tolerance above of the program's.
TEST(CliQdq, RefitOfTheInt8ModuleKeepsItsOutputs) {
  if (const std::string why = int8_inexact_reason(); !why.empty()) GTEST_SKIP() << why;
  const fs::path dir = scratch_dir("cli_qdq_refit");
  auto [out, got] = compile_and_run(dir, "qdq_tiny_resnet", " --precision int8 --refittable");
  ASSERT_TRUE(got.defined());
  const std::string refitted = (dir / "refitted.kiln").string();
  Result r = kiln("refit " + (dir / "qdq_tiny_resnet.kiln").string() + " " +
                  data("qdq/qdq_tiny_resnet/model.pt2") + " -o " + refitted);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string outputs = (dir / "refitted_out.npz").string();
  Result run =
      kiln("run " + refitted + " --inputs " + data("qdq/qdq_tiny_resnet/io_0.npz") + " --outputs " + outputs);
  ASSERT_EQ(run.code, 0) << run.err;
  const HostTensor want = read_npz(data("qdq/qdq_tiny_resnet/io_0.npz")).at("output_0");
  EXPECT_GE(testing::sqnr_db(read_npz(outputs).at("output_0"), want), 50.0);
}

TEST(CliQdq, Fp32RunsTheQdqArithmeticAndSaysWhyNothingFolds) {
  const fs::path dir = scratch_dir("cli_qdq_fp32");
  for (const std::string& fixture : kFixtures) {
    SCOPED_TRACE(fixture);
    auto [out, got] = compile_and_run(dir, fixture, "");
    ASSERT_TRUE(got.defined());
    EXPECT_NE(out.find("Q/DQ: 0 of "), std::string::npos) << out;
    EXPECT_NE(out.find("fake-quant arithmetic (int8 precision not enabled)"), std::string::npos) << out;
    expect_the_programs_outputs(got, fixture);
  }
}

// On a CPU without VNNI (oneDNN's INT8 kernels would saturate pair sums) --precision int8 folds nothing: the
// program's arithmetic runs in fp32, and the report says why per pair.
TEST(CliQdq, WithoutExactInt8KernelsTheProgramsArithmeticRunsAndSaysWhy) {
  const std::string why = int8_inexact_reason();
  if (why.empty())
    GTEST_SKIP() << "this CPU's INT8 kernels are exact (Int8FoldsEveryQdqPairAndMatchesTheProgram)";
  const fs::path dir = scratch_dir("cli_qdq_inexact");
  for (const std::string& fixture : kFixtures) {
    SCOPED_TRACE(fixture);
    auto [out, got] = compile_and_run(dir, fixture, " --precision int8");
    ASSERT_TRUE(got.defined());
    EXPECT_NE(out.find("Q/DQ: 0 of "), std::string::npos) << out;
    EXPECT_NE(out.find("fake-quant arithmetic (" + why + ")"), std::string::npos) << out;
    expect_the_programs_outputs(got, fixture);
  }
}

TEST(CliQdq, CalibrationDataIsNotUsedForAQdqProgramAndIsStillNeededWithoutOne) {
  const fs::path dir = scratch_dir("cli_qdq_calibration");
  HostTensor calib(DType::Float32, {4, 3, 32, 32});
  for (int64_t i = 0; i < calib.numel(); ++i) calib.set_from_double(i, static_cast<double>(i % 7) - 3.0);
  const std::string file = (dir / "calib.npz").string();
  write_npz(file, {{"input_0", calib}});
  Result c = kiln("compile " + data("qdq/qdq_tiny_resnet/model.pt2") + " -o " + (dir / "m.kiln").string() +
                  " --precision int8 --calibration " + file);
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.err.find("is not used"), std::string::npos) << c.err;
  if (int8_inexact_reason().empty())
    EXPECT_NE(c.out.find("ranges from the program's quantize/dequantize nodes"), std::string::npos) << c.out;

  Result plain = kiln("compile " + data("tiny_resnet/model.pt2") + " -o " + (dir / "p.kiln").string() +
                      " --precision int8");
  EXPECT_EQ(plain.code, 2);
  EXPECT_NE(plain.err.find("int8 needs calibration data or quantize/dequantize nodes"), std::string::npos)
      << plain.err;
  EXPECT_EQ(lines(plain.err), 1u) << plain.err;
}

}  // namespace
}  // namespace kiln
