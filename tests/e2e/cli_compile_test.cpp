// kiln compile / run / bench / refit as a user types them, each in its own process: a compiled module matches
// torch's outputs, the engine cache hits across processes, refit keeps outputs, bench prints its JSON, and bad input
// is a one-line error that leaves no file behind.

#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_util.h"
#include "kiln/runtime/compiled_module.h"
#include "kiln/runtime/module_archive.h"
#include "scratch_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using namespace kiln::cli_test;  // NOLINT(google-build-using-namespace)

using kiln::test_files::scratch_dir;

// The fp32 CPU bound: max abs error <= 1e-3 (engines and libtorch may sum in different orders).
std::string compare_io(const std::string& fixture, int io = 0) {
  const std::string npz = data(fixture + "/io_" + std::to_string(io) + ".npz");
  return " --inputs " + npz + " --compare " + npz + " --atol 1e-3 --rtol 0";
}

TEST(CliCompile, CompiledModuleAndInMemoryCompileMatchTorch) {
  fs::path dir = scratch_dir("cli_compile_match");
  for (const std::string fixture : {"tiny_convnet", "tiny_resnet", "tiny_encoder", "tiny_mlp"}) {
    const std::string kiln_file = (dir / (fixture + ".kiln")).string();
    Result c = kiln("compile " + data(fixture + "/model.pt2") + " -o " + kiln_file + " --no-cache");
    ASSERT_EQ(c.code, 0) << fixture << ": " << c.err;
    EXPECT_NE(c.out.find("engines"), std::string::npos) << c.out;
    Result run = kiln("run " + kiln_file + compare_io(fixture));
    EXPECT_EQ(run.code, 0) << fixture << ": " << run.out << run.err;
    EXPECT_NE(run.out.find("comparison passed"), std::string::npos) << run.out;
  }
  Result direct = kiln("run " + data("tiny_mlp/model.pt2") + compare_io("tiny_mlp"));
  EXPECT_EQ(direct.code, 0) << direct.out << direct.err;
}

TEST(CliCompile, CudaGraphsAndTf32FlagsAreAcceptedAndTheModuleKeepsGraphs) {
  fs::path dir = scratch_dir("cli_compile_graphs");
  const std::string kiln_file = (dir / "graphs.kiln").string();
  // On the cpu backend both settings change nothing in the results; the .kiln still records use_cuda_graphs.
  Result c = kiln("compile " + data("tiny_mlp/model.pt2") + " -o " + kiln_file +
                  " --no-cache --use-cuda-graphs --allow-tf32");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_TRUE(runtime::load(kiln_file)->use_cuda_graphs());
  Result run = kiln("run " + kiln_file + compare_io("tiny_mlp"));
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  const std::string plain_file = (dir / "plain.kiln").string();
  ASSERT_EQ(kiln("compile " + data("tiny_mlp/model.pt2") + " -o " + plain_file + " --no-cache").code, 0);
  EXPECT_FALSE(runtime::load(plain_file)->use_cuda_graphs());
}

// A build whose matrix multiplies only the reference kernels take (fp16 on the cpu: oneDNN's rows take fp32)
// says so once, at the default log level, with the first layer's reasons; the fp32 build of the same model
// does not.
TEST(CliCompile, MatrixMultipliesOnReferenceKernelsWarnOnce) {
  fs::path dir = scratch_dir("cli_compile_reference_warning");
  const std::string model = data("tiny_mlp/model.pt2");
  Result fp16 =
      kiln("compile " + model + " -o " + (dir / "fp16.kiln").string() + " --no-cache --precision fp16");
  ASSERT_EQ(fp16.code, 0) << fp16.err;
  const std::string all = fp16.out + fp16.err;
  const size_t at = all.find("run reference kernels");
  ASSERT_NE(at, std::string::npos) << all;
  EXPECT_EQ(all.find("run reference kernels", at + 1), std::string::npos) << "said once: " << all;
  EXPECT_NE(all.find("(onednn takes f32)"), std::string::npos) << all;
  Result fp32 = kiln("compile " + model + " -o " + (dir / "fp32.kiln").string() + " --no-cache");
  ASSERT_EQ(fp32.code, 0) << fp32.err;
  EXPECT_EQ((fp32.out + fp32.err).find("reference kernels"), std::string::npos) << fp32.out << fp32.err;
}

TEST(CliCompile, EngineCacheHitsInASecondProcess) {
  fs::path dir = scratch_dir("cli_compile_cache");
  const std::string flags = " --cache-dir " + (dir / "engines").string() + " --timing-cache " +
                            (dir / "timing.bin").string();
  Result first = kiln("compile " + data("tiny_resnet/model.pt2") + " -o " + (dir / "a.kiln").string() + flags);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out.find(", 0 engines from the cache"), std::string::npos) << first.out;
  Result second = kiln("compile " + data("tiny_resnet/model.pt2") + " -o " + (dir / "b.kiln").string() + flags);
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.out.find(", 1 engines from the cache"), std::string::npos) << second.out;
  Result run = kiln("run " + (dir / "b.kiln").string() + compare_io("tiny_resnet"));
  EXPECT_EQ(run.code, 0) << run.out << run.err;
}

TEST(CliCompile, RefitKeepsOutputsAndRefusesWhatItCannotDo) {
  fs::path dir = scratch_dir("cli_compile_refit");
  const std::string refittable = (dir / "refittable.kiln").string();
  ASSERT_EQ(kiln("compile " + data("tiny_convnet/model.pt2") + " -o " + refittable + " --refittable --no-cache").code, 0);
  const std::string refitted = (dir / "refitted.kiln").string();
  Result r = kiln("refit " + refittable + " " + data("tiny_mlp/model.pt2") + " -o " + refitted);
  // Another architecture: a structure difference, named.
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find("structure differs"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_FALSE(fs::exists(refitted));
  r = kiln("refit " + refittable + " " + data("tiny_convnet/model.pt2") + " -o " + refitted);
  ASSERT_EQ(r.code, 0) << r.err;
  Result run = kiln("run " + refitted + compare_io("tiny_convnet"));
  EXPECT_EQ(run.code, 0) << run.out << run.err;

  const std::string immutable = (dir / "immutable.kiln").string();
  ASSERT_EQ(kiln("compile " + data("tiny_convnet/model.pt2") + " -o " + immutable + " --no-cache").code, 0);
  r = kiln("refit " + immutable + " " + data("tiny_convnet/model.pt2") + " -o " + refitted + "2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("immutable_weights=false"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(refitted + "2"));
}

TEST(CliCompile, BenchPrintsTheDocumentedJson) {
  Result r = kiln("bench " + data("tiny_mlp/model.pt2") + " --inputs " + data("tiny_mlp/io_0.npz") +
                  " --iters 3 --warmup 1 --threads 1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  for (const char* key : {"kiln_ms_median", "kiln_ms_p90", "reference_ms_median", "reference_ms_p90", "speedup"}) {
    ASSERT_TRUE(j.contains(key)) << key << " in " << r.out;
    EXPECT_GT(j[key].get<double>(), 0.0) << key;
  }
}

TEST(CliCompile, BadInputIsOneLineAndLeavesNoFile) {
  fs::path dir = scratch_dir("cli_compile_bad");
  const std::string out = (dir / "out.kiln").string();
  for (const std::string& args :
       {"compile " + data("tiny_mlp/model.pt2") + " -o " + out + " --input x=4:2:8",
        "compile " + data("tiny_mlp/model.pt2") + " -o " + out + " --input nosuch=1x32",
        "compile " + data("tiny_mlp/model.pt2") + " -o " + out + " --precision fp4",
        "compile " + data("tiny_mlp/model.pt2") + " -o " + (dir / "missing" / "out.kiln").string(),
        "refit " + data("tiny_mlp/model.pt2") + " " + data("tiny_mlp/model.pt2") + " -o " + out}) {
    Result r = kiln(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_EQ(lines(r.err), 1u) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  EXPECT_TRUE(fs::is_empty(dir)) << "no temporary file left behind";
}

}  // namespace
}  // namespace kiln
