// A compiled module is no larger than its program: the small BERT of tests/data/models compiles (cpu, fp32)
// to a .kiln at most 10% larger than its .pt2 (before .kiln format 2 stored every engine weight twice: 1.8x).

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "compiler/compile_test_util.h"
#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/runtime/module_archive.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

TEST(ModuleSize, SmallBertIsAtMostItsPt2PlusTenPercent) {
  const std::string pt2 = testing_util::fixture("models/bert");
  frontend::Program program = frontend::load_program(pt2);
  auto module = compiler::compile(program, compiler::CompilationSettings{});
  ASSERT_NE(module, nullptr);
  const std::string path =
      (fs::temp_directory_path() / ("kiln_module_size_" + std::to_string(::getpid()))).string();
  runtime::save(*module, path);
  const uintmax_t kiln_bytes = fs::file_size(path), pt2_bytes = fs::file_size(pt2);
  runtime::ModuleArchiveInfo info = runtime::describe_module_archive(path);
  fs::remove(path);
  EXPECT_LE(kiln_bytes, pt2_bytes + pt2_bytes / 10)
      << "plans " << info.plan_bytes << ", constants " << info.constant_bytes << ", .pt2 " << pt2_bytes;
}

}  // namespace
}  // namespace kiln
