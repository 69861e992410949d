// runtime::CompiledModule from compiler::compile: input validation, concurrent execution, .kiln archives that are
// malformed. Uses tiny_mlp (x: f32[s, 32], s in a range) and tiny_resnet.

#include <cstring>
#include <filesystem>
#include <thread>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "compiler/compile_test_util.h"
#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/runtime/module_archive.h"
#include "kiln/support/error.h"

namespace kiln {
namespace {

using testing_util::fixture;
using testing_util::random_floats;

std::shared_ptr<runtime::CompiledModule> compile_fixture(const std::string& name, int64_t min_block_size = 5) {
  frontend::Program program = frontend::load_program(fixture(name));
  compiler::CompilationSettings settings;
  settings.min_block_size = min_block_size;
  return compiler::compile(program, settings);
}

TEST(CompiledModuleInputs, RejectsWrongCountDtypeRankAndShape) {
  auto module = compile_fixture("tiny_mlp");
  ASSERT_NE(module, nullptr);
  at::Tensor good = at::randn({4, 32});
  EXPECT_NO_THROW(module->execute({good}));
  auto expect_invalid = [&](const std::vector<at::Tensor>& inputs, const std::string& needle) {
    try {
      module->execute(inputs);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_invalid({}, "inputs");
  expect_invalid({good, good}, "inputs");
  expect_invalid({good.to(at::kDouble)}, "dtype");
  expect_invalid({at::randn({4, 32, 1})}, "rank");
  expect_invalid({at::randn({4, 31})}, "dim 1");
  expect_invalid({at::Tensor()}, "undefined");
}

TEST(CompiledModuleInputs, NonContiguousInputsAreAccepted) {
  auto module = compile_fixture("tiny_mlp");
  at::Tensor base = at::randn({32, 6});
  at::Tensor transposed = base.t();  // [6, 32], not contiguous
  ASSERT_FALSE(transposed.is_contiguous());
  std::vector<at::Tensor> a = module->execute({transposed});
  std::vector<at::Tensor> b = module->execute({transposed.contiguous()});
  ASSERT_EQ(a.size(), b.size());
  // Same values in the same kernels: identical results.
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i]));
}

TEST(CompiledModuleThreads, ConcurrentExecuteEqualsSerial) {
  for (const char* name : {"tiny_mlp", "tiny_resnet"}) {
    auto module = compile_fixture(name);
    ASSERT_NE(module, nullptr);
    const ir::Value* input = module->graph().inputs()[0];
    std::vector<int64_t> shape;
    for (const ir::SymExpr& d : input->meta().sizes) shape.push_back(d.as_int().value_or(3));
    constexpr int kThreads = 4;
    constexpr int kIters = 5;
    std::vector<HostTensor> inputs;
    std::vector<std::vector<HostTensor>> serial;
    for (int t = 0; t < kThreads; ++t) {
      inputs.push_back(random_floats(shape, 100 + t));
      serial.push_back(module->execute_host({inputs.back()}));
    }
    std::vector<int> mismatches(kThreads, 0);
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t]() {
        try {
          for (int i = 0; i < kIters; ++i) {
            std::vector<HostTensor> out = module->execute_host({inputs[t]});
            for (size_t j = 0; j < out.size(); ++j) {
              if (out[j].sizes() != serial[t][j].sizes() ||
                  std::memcmp(out[j].data(), serial[t][j].data(), out[j].nbytes()) != 0) {
                ++mismatches[t];
              }
            }
          }
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(mismatches[t], 0) << name << " thread " << t;
      EXPECT_EQ(errors[t], "") << name << " thread " << t;
    }
  }
}

class MalformedArchive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto module = compile_fixture("tiny_mlp");
    bytes_ = new std::vector<uint8_t>(runtime::save_to_bytes(*module));
  }
  static void TearDownTestSuite() { delete bytes_; }
  static std::vector<uint8_t>* bytes_;
};
std::vector<uint8_t>* MalformedArchive::bytes_ = nullptr;

TEST_F(MalformedArchive, IntactBytesLoad) { EXPECT_NO_THROW(runtime::load_from_bytes(*bytes_, "intact")); }

TEST_F(MalformedArchive, TruncationsAreErrors) {
  const size_t n = bytes_->size();
  for (size_t keep : {size_t{0}, size_t{10}, n / 4, n / 2, n - 100, n - 22, n - 1}) {
    std::vector<uint8_t> cut(bytes_->begin(), bytes_->begin() + keep);
    EXPECT_THROW(runtime::load_from_bytes(cut, "truncated"), Error) << "kept " << keep << " of " << n;
  }
}

TEST_F(MalformedArchive, ByteFlipsAreErrorsNeverCrashes) {
  // Flips all over the file (headers, JSON, graph text, plans, weights): the zip CRCs and the plan checksums must
  // catch every one; a flip inside the zip's unused bytes may load, but must then still run correctly.
  const size_t n = bytes_->size();
  int errors = 0;
  for (size_t step = 0; step < 97; ++step) {
    std::vector<uint8_t> flipped = *bytes_;
    size_t pos = (step * 7919 + 13) % n;
    flipped[pos] ^= static_cast<uint8_t>(1u << (step % 8));
    try {
      auto m = runtime::load_from_bytes(flipped, "flipped");
      m->execute_host({random_floats({3, 32}, 7)});
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 80);
}

TEST_F(MalformedArchive, ForeignFilesAreErrors) {
  EXPECT_THROW(runtime::load(fixture("tiny_mlp")), Error);  // a .pt2
  EXPECT_THROW(runtime::load(fixture("tiny_mlp", "io_0.npz")), Error);
  EXPECT_THROW(runtime::load("/nonexistent/model.kiln"), Error);
  EXPECT_FALSE(runtime::is_module_archive(fixture("tiny_mlp")));
  std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o'};
  EXPECT_THROW(runtime::load_from_bytes(text, "text"), Error);
}

TEST_F(MalformedArchive, FailedSaveLeavesNothingBehind) {
  auto module = compile_fixture("tiny_mlp");
  std::string dir = (std::filesystem::temp_directory_path() / "kiln_no_such_dir_for_test").string();
  std::filesystem::remove_all(dir);
  EXPECT_THROW(runtime::save(*module, dir + "/m.kiln"), Error);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace kiln
