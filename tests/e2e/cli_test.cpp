// Runs the kiln binary as a user would: inspect --json, run --compare (pass, deliberately wrong reference),
// and errors (missing file, garbage file) with their exit codes.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_util.h"
#include "kiln/support/npz.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using namespace kiln::cli_test;  // NOLINT(google-build-using-namespace)

TEST(Cli, InspectJsonHasTheDocumentedFields) {
  Result r = kiln("inspect " + data("tiny_encoder/model.pt2") + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["inputs"].size(), 1u);
  EXPECT_EQ(j["inputs"][0]["dtype"], "f32");
  ASSERT_EQ(j["inputs"][0]["shape"].size(), 3u);
  EXPECT_TRUE(j["inputs"][0]["shape"][0].is_string());  // dynamic batch: a symbol name
  EXPECT_TRUE(j["inputs"][0]["shape"][1].is_string());  // dynamic sequence
  EXPECT_EQ(j["inputs"][0]["shape"][2], 64);
  EXPECT_EQ(j["outputs"].size(), 1u);
  EXPECT_GT(j["parameters"].get<int64_t>(), 0);
  EXPECT_GE(j["parameter_bytes"].get<int64_t>(), 4 * j["parameters"].get<int64_t>());
  std::string batch = j["inputs"][0]["shape"][0];
  ASSERT_TRUE(j["symbols"].contains(batch));
  EXPECT_TRUE(j["symbols"][batch].contains("min"));
  EXPECT_TRUE(j["symbols"][batch].contains("max"));
  EXPECT_EQ(j["ops"]["aten.scaled_dot_product_attention.default"], 1);
}

TEST(Cli, InspectTextAndGraph) {
  Result r = kiln("inspect " + data("tiny_convnet/model.pt2") + " --graph");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("aten.conv2d.default"), std::string::npos);
  EXPECT_NE(r.out.find("graph("), std::string::npos);
}

TEST(Cli, InspectCoverageFindsEveryFixtureOpConverted) {
  // Every fixture: all ops have converters (tiny_convnet's lgamma included), no PyTorch run.
  for (const char* fixture : {"tiny_convnet", "tiny_resnet", "tiny_encoder", "tiny_mlp"}) {
    for (const char* form : {"model.pt2", "model_core_aten.pt2"}) {
      std::string model = data(std::string(fixture) + "/" + form);
      if (!fs::exists(model)) continue;
      Result r = kiln("inspect " + model + " --coverage --json");
      ASSERT_EQ(r.code, 0) << model << ": " << r.err;
      nlohmann::json c = nlohmann::json::parse(r.out)["coverage"];
      EXPECT_EQ(c["ops_total"].get<int>(), c["ops_supported"].get<int>()) << model;
      EXPECT_EQ(c["unsupported"].size(), 0u) << model << ": " << c["unsupported"].dump();
      size_t torch_segments = 0;
      for (const auto& s : c["segments"]) torch_segments += s["kind"] == "torch";
      EXPECT_EQ(torch_segments, 0u) << model;
    }
  }
}

TEST(Cli, CoverageHonoursTorchExecutedOps) {
  Result r = kiln("inspect " + data("tiny_mlp/model.pt2") + " --coverage --json --torch-executed-ops aten.gelu.default");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json c = nlohmann::json::parse(r.out)["coverage"];
  ASSERT_EQ(c["unsupported"].size(), 2u);  // the two gelu nodes
  for (const auto& u : c["unsupported"]) EXPECT_EQ(u["op"], "aten.gelu.default");
}

// Issue 23: an unknown subcommand used to give "A subcommand is required", a misspelt --torch-executed-ops name
// was accepted and forced nothing into PyTorch, and control bytes from the command line or an archive reached
// the terminal raw.
TEST(Cli, NamesUnknownSubcommandsAndOperators) {
  Result sub = kiln("frobnicate");
  EXPECT_EQ(sub.code, 2);
  EXPECT_NE(sub.err.find("unknown subcommand 'frobnicate'"), std::string::npos) << sub.err;
  EXPECT_EQ(lines(sub.err), 1u) << sub.err;

  Result escape = kiln("\"$(printf 'frob\\033[31m')\"");
  EXPECT_EQ(escape.code, 2);
  EXPECT_EQ(escape.err.find('\x1b'), std::string::npos) << escape.err;
  EXPECT_NE(escape.err.find("frob\\x1b[31m"), std::string::npos) << escape.err;

  Result ops = kiln("inspect " + data("tiny_mlp/model.pt2") +
                    " --coverage --torch-executed-ops aten.gelu,aten.rleu.default,aten.gelu.default,nosuch.op");
  EXPECT_EQ(ops.code, 2);
  EXPECT_NE(ops.err.find("unknown operator 'aten.rleu.default', 'nosuch.op'"), std::string::npos) << ops.err;
}

TEST(Cli, PassesAndConvertersList) {
  Result passes = kiln("passes");
  ASSERT_EQ(passes.code, 0) << passes.err;
  EXPECT_NE(passes.out.find("fold_batch_norm_into_conv"), std::string::npos);
  EXPECT_LT(passes.out.find("pre_lowering"), passes.out.find("post_lowering"));
  Result converters = kiln("converters");
  ASSERT_EQ(converters.code, 0) << converters.err;
  EXPECT_NE(converters.out.find("aten.convolution.default"), std::string::npos);
  EXPECT_NE(converters.out.find("aten.lgamma.default"), std::string::npos);
  EXPECT_NE(converters.out.find("aten.special_gammaln.default"), std::string::npos);
  EXPECT_EQ(converters.out.find("aten.special_airy_ai.default"), std::string::npos);
}

TEST(Cli, InspectLoweredGraphHasNoTrainingOps) {
  Result r = kiln("inspect " + data("tiny_encoder/model.pt2") + " --lowered --graph");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("aten.dropout"), std::string::npos);
  EXPECT_EQ(r.out.find("aten.view.default"), std::string::npos);
  EXPECT_NE(r.out.find("aten.reshape.default"), std::string::npos);
}

TEST(Cli, RunCompareAgainstTorchPasses) {
  fs::path out = fs::temp_directory_path() / ("kiln_cli_out_" + std::to_string(::getpid()) + ".npz");
  Result r = kiln("run " + data("tiny_convnet/model.pt2") + " --reference --inputs " + data("tiny_convnet/io_1.npz") +
                  " --compare " + data("tiny_convnet/io_1.npz") + " --outputs " + out.string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("cosine"), std::string::npos);
  auto written = read_npz(out.string());
  EXPECT_EQ(written.count("output_0"), 1u);
  EXPECT_EQ(written.count("output_1"), 1u);
  fs::remove(out);
}

TEST(Cli, RunCompareAgainstAWrongReferenceFails) {
  // The reference outputs of io_0 perturbed by noise far beyond the 1e-4 tolerance.
  auto io = read_npz(data("tiny_mlp/io_0.npz"));
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0.0, 0.1);
  HostTensor& ref = io.at("output_0");
  for (int64_t i = 0; i < ref.numel(); ++i) ref.set_from_double(i, ref.get_as_double(i) + noise(rng));
  fs::path wrong = fs::temp_directory_path() / ("kiln_cli_wrong_" + std::to_string(::getpid()) + ".npz");
  write_npz(wrong.string(), io);
  Result r = kiln("run " + data("tiny_mlp/model.pt2") + " --reference --inputs " + data("tiny_mlp/io_0.npz") +
                  " --compare " + wrong.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos);
  fs::remove(wrong);
}

// Non-finite outputs (issue 16): an output with inf/NaN where the reference is finite, or finite where the
// reference is inf, fails with cosine "nan" (before, a cosine over the finite elements read 1.000000); NaN where
// the reference has NaN too is a match.
TEST(Cli, RunCompareFailsOnNonFiniteMismatchesWithCosineNan) {
  const fs::path dir = fs::temp_directory_path() / ("kiln_cli_nonfinite_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto io = read_npz(data("tiny_mlp/io_0.npz"));
  // Row 1 of the input is inf: layer_norm makes that output row NaN, the other rows stay finite.
  auto poisoned = io;
  HostTensor& x = poisoned.at("input_0");
  const int64_t cols = x.sizes()[1];
  for (int64_t j = 0; j < cols; ++j) x.set_from_double(cols + j, std::numeric_limits<double>::infinity());
  const std::string poisoned_npz = (dir / "poisoned.npz").string();
  write_npz(poisoned_npz, poisoned);

  // Kiln's output has NaN where the (original, finite) reference has numbers: FAIL, cosine nan.
  Result nan_out = kiln("run " + data("tiny_mlp/model.pt2") + " --reference --inputs " + poisoned_npz +
                        " --compare " + data("tiny_mlp/io_0.npz"));
  EXPECT_EQ(nan_out.code, 1) << nan_out.out << nan_out.err;
  EXPECT_NE(nan_out.out.find("cosine nan"), std::string::npos) << nan_out.out;
  EXPECT_NE(nan_out.out.find("non-finite"), std::string::npos) << nan_out.out;

  // The reference has inf where Kiln's output is finite: FAIL, cosine nan.
  auto inf_ref = io;
  inf_ref.at("output_0").set_from_double(3, std::numeric_limits<double>::infinity());
  const std::string inf_ref_npz = (dir / "inf_ref.npz").string();
  write_npz(inf_ref_npz, inf_ref);
  Result inf_in_ref = kiln("run " + data("tiny_mlp/model.pt2") + " --reference --inputs " +
                           data("tiny_mlp/io_0.npz") + " --compare " + inf_ref_npz);
  EXPECT_EQ(inf_in_ref.code, 1) << inf_in_ref.out << inf_in_ref.err;
  EXPECT_NE(inf_in_ref.out.find("cosine nan"), std::string::npos) << inf_in_ref.out;

  // NaN at the same positions on both sides (torch's own output for the poisoned input): a match.
  const std::string torch_out = (dir / "torch_out.npz").string();
  Result ref = kiln("run " + data("tiny_mlp/model.pt2") + " --reference --inputs " + poisoned_npz + " --outputs " +
                    torch_out);
  ASSERT_EQ(ref.code, 0) << ref.out << ref.err;
  auto written = read_npz(torch_out);
  ASSERT_TRUE(std::isnan(written.at("output_0").get_as_double(written.at("output_0").sizes()[1])));
  Result same = kiln("run " + data("tiny_mlp/model.pt2") + " --inputs " + poisoned_npz + " --compare " + torch_out +
                     " --atol 1e-3 --rtol 0");
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  EXPECT_EQ(same.out.find("cosine nan"), std::string::npos) << same.out;
  fs::remove_all(dir);
}

TEST(Cli, ErrorsExitTwoWithOneLine) {
  Result missing = kiln("inspect /nonexistent/model.pt2");
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(lines(missing.err), 1u) << missing.err;
  EXPECT_EQ(missing.err.rfind("kiln: error: ", 0), 0u) << missing.err;

  fs::path garbage = fs::temp_directory_path() / ("kiln_cli_garbage_" + std::to_string(::getpid()) + ".pt2");
  {
    std::ofstream f(garbage, std::ios::binary);
    std::mt19937 rng(9);
    for (int i = 0; i < 4096; ++i) f.put(static_cast<char>(rng() & 0xff));
  }
  for (const std::string& args : {"inspect " + garbage.string(),
                                  "run " + garbage.string() + " --reference --inputs " + data("tiny_mlp/io_0.npz"),
                                  "run " + data("tiny_mlp/model.pt2") + " --reference --inputs " + garbage.string()}) {
    Result r = kiln(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(lines(r.err), 1u) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("kiln: error: ", 0), 0u) << r.err;
  }
  fs::remove(garbage);

  Result usage = kiln("run");
  EXPECT_EQ(usage.code, 2);
  EXPECT_EQ(lines(usage.err), 1u) << usage.err;
  Result wrong_inputs = kiln("run " + data("tiny_mlp/model.pt2") + " --reference --inputs " +
                             data("tiny_convnet/io_0.npz"));
  EXPECT_EQ(wrong_inputs.code, 2) << wrong_inputs.out;
  EXPECT_EQ(lines(wrong_inputs.err), 1u) << wrong_inputs.err;
}

}  // namespace
}  // namespace kiln
