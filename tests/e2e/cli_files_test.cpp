// What the kiln commands read and write (docs/cli.md, "Files"), each as a user would type it: non-regular
// inputs are one-line errors (never a hang), outputs never replace a device node, FIFO or symbolic link nor
// overwrite an input of the same command, a failed write says why and leaves no file, and --threads is
// capped.

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "e2e/cli_util.h"
#include "scratch_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using namespace kiln::cli_test;  // NOLINT(google-build-using-namespace)

using kiln::test_files::scratch_dir;

const std::string kModel = data("tiny_mlp/model.pt2");
const std::string kInputs = data("tiny_mlp/io_0.npz");

// A character device with the numbers of /dev/null (minor 3) or /dev/full (minor 7), made here so that the
// real ones are never at risk; empty when not root.
std::string char_device(const fs::path& dir, const std::string& name, int minor) {
  const std::string path = (dir / name).string();
  return ::mknod(path.c_str(), S_IFCHR | 0666, ::makedev(1, minor)) == 0 ? path : "";
}

// A FIFO or a device as the model, the inputs or the timing cache is a one-line error naming what it is,
// never a read that blocks (a FIFO without a writer) or runs until memory is exhausted (/dev/zero).
TEST(CliFiles, NonRegularInputsAreOneLineErrors) {
  fs::path dir = scratch_dir("cli_files_inputs");
  const std::string fifo = (dir / "model.pt2").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string out = (dir / "out.kiln").string();
  for (const auto& [args, words] : std::vector<std::pair<std::string, std::string>>{
           {"compile " + fifo + " -o " + out, "a FIFO"},
           {"compile /dev/zero -o " + out, "a character device"},
           {"compile " + dir.string() + " -o " + out, "a directory"},
           {"run " + kModel + " --inputs " + fifo, "a FIFO"},
           {"run " + kModel + " --inputs /dev/zero", "a character device"},
           {"compile " + kModel + " -o " + out + " --timing-cache " + fifo, "a FIFO"},
           {"compile " + kModel + " -o " + out + " --timing-cache /dev/zero", "a character device"}}) {
    Result r = kiln(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_EQ(lines(r.err), 1u) << args << ": " << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
}

// An output that is a FIFO, directory or symbolic link is refused before any work, and left as it was; a
// character device is written in place and stays one (as root, `-o /dev/null` turned /dev/null into a regular
// file); an output that is the command's own input is refused and the input is untouched.
TEST(CliFiles, OutputsNeverReplaceNodesOrInputs) {
  fs::path dir = scratch_dir("cli_files_outputs");
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::copy_file(kModel, dir / "model.pt2");
  const std::string model = (dir / "model.pt2").string();
  const std::string before = read_file(model);
  fs::copy_file(kModel, dir / "old.kiln");
  fs::create_symlink(dir / "old.kiln", dir / "link.kiln");
  for (const auto& [args, words] : std::vector<std::pair<std::string, std::string>>{
           {"compile " + model + " -o " + fifo + " --no-cache", "a FIFO"},
           {"compile " + model + " -o " + dir.string() + " --no-cache", "a directory"},
           {"compile " + model + " -o " + (dir / "link.kiln").string() + " --no-cache", "a symbolic link"},
           {"compile " + model + " -o " + model + " --no-cache", "same file as the model"},
           {"compile " + model + " -o " + (dir / "out.kiln").string() + " --timing-cache " + model,
            "same file as the model"},
           {"run " + model + " --inputs " + kInputs + " --outputs " + kInputs, "same file as --inputs"},
           {"run " + model + " --inputs " + kInputs + " --outputs " + fifo, "a FIFO"}}) {
    Result r = kiln(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_EQ(lines(r.err), 1u) << args << ": " << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_EQ(read_file(model), before) << "the input was overwritten";
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_symlink(dir / "link.kiln"));
  EXPECT_FALSE(fs::exists(dir / "out.kiln"));

  const std::string null_dev = char_device(dir, "null", 3);
  if (null_dev.empty()) GTEST_SKIP() << "mknod needs root";
  Result c = kiln("compile " + model + " -o " + null_dev + " --no-cache");
  EXPECT_EQ(c.code, 0) << c.err;
  Result r = kiln("run " + model + " --inputs " + kInputs + " --outputs " + null_dev);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_character_file(null_dev));
}

// A write that fails (here the file size limit; a full disk the same) says why and leaves no file, not even
// an empty one (`bench --profile-json` on a full disk left a 0-byte file and said no reason).
TEST(CliFiles, FailedProfileWriteSaysWhyAndLeavesNothing) {
  fs::path dir = scratch_dir("cli_files_profile");
  const std::string profile = (dir / "profile.json").string();
  Result r = kiln("bench " + kModel + " --inputs " + kInputs +
                      " --iters 1 --warmup 0 --threads 1 --profile-json " + profile,
                  "trap '' XFSZ; ulimit -f 1; ");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir)) << "a partial or empty file was left";

  Result to_dir = kiln("bench " + kModel + " --inputs " + kInputs + " --iters 1 --warmup 0 --profile-json " +
                       dir.string());
  EXPECT_EQ(to_dir.code, 2) << to_dir.out;
  EXPECT_NE(to_dir.err.find("a directory"), std::string::npos) << to_dir.err;
}

// More threads than cores only oversubscribe them (`bench --threads 1000` ran over a minute on 2 cores): the
// count is capped at the cores available to the process, with a one-line warning.
TEST(CliFiles, BenchThreadsAreCappedAtTheCores) {
  Result r = kiln("bench " + kModel + " --inputs " + kInputs + " --iters 1 --warmup 0 --threads 1000 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--threads 1000 is more than the"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.out.find("\"threads\":1000"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kiln
