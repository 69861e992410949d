// Hostile edits of a compiled module's module.json, as a user runs it: an unknown output kind is a load error
// (exit 2), and a comparison with no user output to compare fails (exit 1) instead of "comparison passed: 0
// outputs" (exit 0) as before.

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "e2e/cli_util.h"
#include "frontend/archive_edit.h"
#include "kiln/support/file.h"

namespace kiln::cli_test {
namespace {

using frontend::testing::ArchiveEntries;

// A fresh compile of tiny_mlp with module.json's output_kinds replaced by `kinds`; returns the edited file.
std::string module_with_output_kinds(const fs::path& dir, const nlohmann::json& kinds) {
  const std::string compiled = (dir / "tiny_mlp.kiln").string();
  if (!fs::exists(compiled)) {
    Result c = kiln("compile " + data("tiny_mlp/model.pt2") + " -o " + compiled + " --no-cache");
    EXPECT_EQ(c.code, 0) << c.out << c.err;
  }
  ArchiveEntries archive = ArchiveEntries::read(compiled);
  nlohmann::json meta = nlohmann::json::parse(archive.text("module.json"));
  meta["output_kinds"] = kinds;
  archive.set_text("module.json", meta.dump());
  const std::string edited = (dir / ("edited_" + std::to_string(kinds.dump().size()) + ".kiln")).string();
  write_file_atomic(edited, archive.zip());
  return edited;
}

class CliHostileModule : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_cli_hostile_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CliHostileModule, UnknownOutputKindIsALoadError) {
  std::string edited = module_with_output_kinds(dir_, {"zz"});
  Result r = kiln("run " + edited + " --inputs " + data("tiny_mlp/io_0.npz") + " --compare " +
                  data("tiny_mlp/io_0.npz"));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("unknown output kind 'zz'"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("comparison passed"), std::string::npos) << r.out;
}

TEST_F(CliHostileModule, ComparingNoUserOutputFails) {
  std::string edited = module_with_output_kinds(dir_, {"other"});  // e.g. a program returning only a buffer update
  Result r = kiln("run " + edited + " --inputs " + data("tiny_mlp/io_0.npz") + " --compare " +
                  data("tiny_mlp/io_0.npz"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("no user outputs to compare"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("comparison passed"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kiln::cli_test
