// torch.classes.kiln.CompiledModule: the class is registered under that name, its methods run through
// TorchScript's method table (the path Python's calls take), and forward returns the same tensors as the
// compiled module it wraps. The module is tiny_convnet (engines plus one PyTorch run: lgamma, forced there by
// --torch-executed-ops), compiled by the kiln binary: this test links only libkiln_torch.so, as a Python
// process would load it. No std::filesystem here: torch 2.11's libtorch.so exports its own copies of those
// functions, which calls from this program bind to (and which crashed on the GPU machine); plain POSIX calls
// instead.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function.h>
#include <gtest/gtest.h>
#include <torch/custom_class.h>

#include "kiln/runtime/module_archive.h"
#include "kiln/support/error.h"
#include "torch_module.h"

namespace kiln {
namespace {

constexpr const char* kClassName = "__torch__.torch.classes.kiln.CompiledModule";

class TorchModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/kiln_torch_module_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/tiny_convnet.kiln";
    const std::string command = std::string(KILN_CLI_PATH) + " compile " + KILN_TEST_DATA_DIR +
                                "/tiny_convnet/model.pt2 -o " + path_ +
                                " --torch-executed-ops aten.lgamma.default > " + dir_ + "/compile.log 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  void TearDown() override {
    for (const char* name : {"/tiny_convnet.kiln", "/compile.log", "/bad.kiln"}) std::remove((dir_ + name).c_str());
    ::rmdir(dir_.c_str());
  }

  std::string dir_;
  std::string path_;
};

TEST_F(TorchModuleTest, RegisteredClassRunsLikeTheCompiledModule) {
  c10::ClassTypePtr cls = torch::getCustomClass(kClassName);
  ASSERT_NE(cls, nullptr) << kClassName << " is not registered";
  torch::jit::Function* forward = cls->findMethod("forward");
  ASSERT_NE(forward, nullptr);

  at::manual_seed(3);
  at::Tensor x = at::randn({3, 3, 16, 16});  // tiny_convnet: f32[batch, 3, 16, 16], batch dynamic
  torch::jit::Stack stack{c10::IValue(c10::make_intrusive<torch_library::TorchModule>(path_)),
                          c10::IValue(c10::List<at::Tensor>({x}))};
  forward->run(stack);
  ASSERT_EQ(stack.size(), 1u);
  std::vector<at::Tensor> got = stack[0].toTensorVector();

  std::shared_ptr<runtime::CompiledModule> module = runtime::load(path_);
  std::vector<at::Tensor> all = module->execute({x});
  std::vector<size_t> user = module->user_output_indices();
  ASSERT_EQ(got.size(), user.size());
  // Same plans, same kernels and the same libtorch ops on the same input: identical results.
  for (size_t i = 0; i < user.size(); ++i) EXPECT_TRUE(at::equal(got[i], all[user[i]])) << "output " << i;
}

// torch.ops.kiln.compile(path, options, samples), as kiln.compile calls it: an fp16 compile with
// tiny_convnet's sample input (one per program input) runs the overflow check (nothing overflows: no such
// note), and samples of another count than the program's inputs are ignored rather than failing the compile.
TEST_F(TorchModuleTest, CompileOpTakesSampleInputs) {
  const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow("kiln::compile", "");
  const std::string pt2 = std::string(KILN_TEST_DATA_DIR) + "/tiny_convnet/model.pt2";
  const std::string options = R"({"settings": {"enabled_precisions": ["f16", "f32"]}})";
  at::manual_seed(5);
  const at::Tensor x = at::randn({2, 3, 16, 16});
  for (const std::vector<at::Tensor>& samples : {std::vector<at::Tensor>{x}, std::vector<at::Tensor>{x, x}}) {
    torch::jit::Stack stack{c10::IValue(pt2), c10::IValue(options),
                            c10::IValue(c10::List<at::Tensor>(samples))};
    op.callBoxed(&stack);
    ASSERT_EQ(stack.size(), 2u);
    const std::string report = stack[1].toStringRef();
    EXPECT_NE(report.find("\"engines\""), std::string::npos) << report;
    EXPECT_EQ(report.find("non-finite on sample input"), std::string::npos) << report;
  }
}

TEST_F(TorchModuleTest, DescribesItself) {
  torch_library::TorchModule m(path_);
  EXPECT_EQ(m.device(), "cpu");
  EXPECT_NE(m.summary().find("engines"), std::string::npos) << m.summary();
  EXPECT_NE(m.summary().find("PyTorch runs (1 nodes)"), std::string::npos) << m.summary();
  // The compile setting is off by default and the switch is the module's own (a no-op on cpu at run time).
  EXPECT_FALSE(m.use_cuda_graphs());
  m.set_use_cuda_graphs(true);
  EXPECT_TRUE(m.use_cuda_graphs());
}

TEST_F(TorchModuleTest, MalformedArchiveIsAKilnError) {
  const std::string bad = dir_ + "/bad.kiln";
  { std::ofstream(bad) << "not a zip"; }
  EXPECT_THROW(torch_library::TorchModule{bad}, Error);
}

}  // namespace
}  // namespace kiln
