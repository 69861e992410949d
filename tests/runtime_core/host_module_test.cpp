// HostModule, the torch-free runtime. This suite links libkiln_runtime_core.so and nothing of libtorch: it checks
// that with ldd and /proc/self/maps, runs an engine-only module with host tensors, and loads a module with a
// PyTorch step through the plug-in (in a child process, so that libtorch never enters this one) or fails with one
// line when the plug-in cannot be loaded. Modules are compiled by the kiln binary, in another process.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "kiln/runtime/host_module.h"
#include "kiln/support/error.h"
#include "kiln/support/npz.h"

namespace kiln::runtime {
namespace {

namespace fs = std::filesystem;

const std::string kTinyMlp = std::string(KILN_TEST_DATA_DIR) + "/tiny_mlp/";

// A folder of this process's, removed at exit.
struct ScratchFolder {
  fs::path path = fs::path(::testing::TempDir()) / ("kiln_runtime_core_test_" + std::to_string(getpid()));
  ScratchFolder() { fs::create_directories(path); }
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

// tiny_mlp compiled by the kiln command with `flags`, once per flags and process.
std::string compiled_tiny_mlp(const std::string& name, const std::string& flags) {
  static const ScratchFolder scratch;
  const fs::path& dir = scratch.path;
  const fs::path out = dir / (name + ".kiln");
  if (!fs::exists(out)) {
    const std::string command = std::string(KILN_CLI_PATH) + " -q compile " + kTinyMlp + "model.pt2 -o " +
                                out.string() + " --no-cache " + flags + " > " + (dir / (name + ".log")).string() +
                                " 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
  return out.string();
}

std::string engine_only_module() { return compiled_tiny_mlp("tiny_mlp", ""); }
std::string torch_step_module() { return compiled_tiny_mlp("tiny_mlp_torch_gelu", "--torch-executed-ops aten.gelu.default"); }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string command_output(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  pclose(pipe);
  return out;
}

bool libtorch_mapped() {
  const std::string maps = read_text("/proc/self/maps");
  return maps.find("libtorch") != std::string::npos || maps.find("libc10") != std::string::npos;
}

// The largest absolute difference of `module`'s outputs from the reference outputs of the fixture's io_K.npz
// (-1 when a shape differs).
double worst_error(const HostModule& module, const std::string& npz) {
  auto io = read_npz(npz);
  std::vector<HostTensor> inputs;
  for (int k = 0; io.count("input_" + std::to_string(k)); ++k) inputs.push_back(io.at("input_" + std::to_string(k)));
  std::vector<HostTensor> outputs = module.execute(inputs);
  double worst = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const HostTensor& want = io.at("output_" + std::to_string(k));
    if (outputs[k].sizes() != want.sizes()) return -1;
    for (int64_t i = 0; i < want.numel(); ++i) {
      worst = std::fmax(worst, std::fabs(outputs[k].get_as_double(i) - want.get_as_double(i)));
    }
  }
  return worst;
}

// fp32 engines against PyTorch eager's reference: the tiny MLP's sums differ by reassociation (~1e-6); 1e-4 is
// the tolerance of the fixture checks (examples/cpp, scripts/check_install.sh).
constexpr double kTolerance = 1e-4;

TEST(HostModule, LinksNoLibtorch) {
  const std::string libraries = command_output("ldd /proc/" + std::to_string(getpid()) + "/exe");
  EXPECT_NE(libraries.find("libkiln_runtime_core.so"), std::string::npos) << libraries;
  EXPECT_EQ(libraries.find("libtorch"), std::string::npos) << libraries;
  EXPECT_EQ(libraries.find("libc10"), std::string::npos) << libraries;
}

TEST(HostModule, RunsAnEngineOnlyModuleWithoutLibtorch) {
  auto module = HostModule::load(engine_only_module());
  EXPECT_EQ(module->summary().torch_runs, 0u);
  EXPECT_GT(module->summary().engine_segments, 0u);
  EXPECT_EQ(module->backend(), "cpu");
  for (const char* io : {"io_0.npz", "io_1.npz"}) {  // batch 5 and 100 of the dynamic batch dim
    const double worst = worst_error(*module, kTinyMlp + io);
    EXPECT_GE(worst, 0) << io << ": output shape differs";
    EXPECT_LE(worst, kTolerance) << io;
  }
  EXPECT_FALSE(libtorch_mapped()) << read_text("/proc/self/maps");
}

TEST(HostModule, ReadsFormatVersion1) {
  auto module = HostModule::load(std::string(KILN_TEST_DATA_DIR) + "/formats/tiny_mlp_v1.kiln");
  const double worst = worst_error(*module, kTinyMlp + "io_0.npz");
  EXPECT_GE(worst, 0);
  EXPECT_LE(worst, kTolerance);
}

TEST(HostModule, ChecksInputs) {
  auto module = HostModule::load(engine_only_module());
  auto expect_invalid = [&](const std::vector<HostTensor>& inputs, const std::string& part) {
    try {
      module->execute(inputs);
      ADD_FAILURE() << "accepted inputs that should fail with '" << part << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_invalid({}, "the module takes 1 inputs, got 0");
  expect_invalid({HostTensor(DType::Int64, {5, 32})}, "has dtype i64");
  expect_invalid({HostTensor(DType::Float32, {5, 32, 1})}, "has rank 3");
  expect_invalid({HostTensor(DType::Float32, {5, 31})}, "dim 1 is 31");
  expect_invalid({HostTensor()}, "is an undefined tensor");
}

TEST(HostModule, PyTorchStepWithoutThePluginFailsWithOneLine) {
  const std::string path = torch_step_module();
  setenv("KILN_TORCH_PLUGIN", "/nonexistent/libkiln_runtime_torch.so", 1);
  try {
    HostModule::load(path);
    ADD_FAILURE() << "loaded a module with a PyTorch step without its plug-in";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(what.find("the module has 1 PyTorch step (ops: aten.gelu.default"), std::string::npos) << what;
    EXPECT_NE(what.find("KILN_TORCH_PLUGIN=/nonexistent/libkiln_runtime_torch.so cannot be loaded"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("install Kiln's PyTorch part"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  unsetenv("KILN_TORCH_PLUGIN");
  EXPECT_FALSE(libtorch_mapped());
}

TEST(HostModule, PluginOfAnotherBuildIsRefused) {
  const std::string path = torch_step_module();
  setenv("KILN_TORCH_PLUGIN", KILN_FOREIGN_TORCH_PLUGIN, 1);
  try {
    HostModule::load(path);
    ADD_FAILURE() << "used a plug-in of another build";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("plug-in belongs to Kiln 0.0.0 another-build"), std::string::npos)
        << e.what();
  }
  unsetenv("KILN_TORCH_PLUGIN");
}

// In a child process (started afresh: a forked child of a process with OpenMP's threads can hang): the plug-in,
// found next to libkiln_runtime_core.so in build/lib, loads libtorch there.
TEST(HostModule, PyTorchStepRunsThroughThePlugin) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = torch_step_module();
  EXPECT_EXIT(
      {
        unsetenv("KILN_TORCH_PLUGIN");
        auto module = HostModule::load(path);
        const double worst = worst_error(*module, kTinyMlp + "io_1.npz");
        std::fprintf(stderr, "torch runs %zu, worst %g, libtorch mapped %d\n", module->summary().torch_runs, worst,
                     libtorch_mapped());
        std::exit(module->summary().torch_runs == 1 && worst >= 0 && worst <= kTolerance && libtorch_mapped() ? 0
                                                                                                              : 1);
      },
      ::testing::ExitedWithCode(0), "torch runs 1");
}

}  // namespace
}  // namespace kiln::runtime
