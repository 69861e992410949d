#include "kiln/support/file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/support/error.h"
#include "support/test_util.h"

namespace kiln {
namespace {

size_t files_in(const std::filesystem::path& dir) {
  return static_cast<size_t>(
      std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()));
}

TEST(File, WriteThenRead) {
  test::TempDir dir;
  std::string path = dir.file("a.bin");
  std::vector<uint8_t> data = test::lcg_bytes(300000, 3);
  write_file_atomic(path, data);
  EXPECT_EQ(read_file_bytes(path), data);
  write_file_atomic(path, "text\n", 5);
  EXPECT_EQ(read_file_text(path), "text\n");
  write_file_atomic(path, nullptr, 0);
  EXPECT_TRUE(read_file_bytes(path).empty());
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(File, ReadErrorsNameThePath) {
  test::TempDir dir;
  test::expect_error([&] { read_file_bytes(dir.file("missing.bin")); }, ErrorKind::Io, {"missing.bin"});
  test::expect_error([&] { read_file_text(dir.path().string()); }, ErrorKind::Io,
                     {dir.path().string(), "directory"});
}

TEST(File, FailedWriteLeavesNothingBehind) {
  test::TempDir dir;
  test::expect_error([&] { write_file_atomic(dir.file("no/such/dir/x.bin"), "x", 1); }, ErrorKind::Io,
                     {"no/such/dir/x.bin"});
  // Renaming over a directory fails; the temporary file is removed and the directory is untouched.
  std::filesystem::create_directory(dir.file("target"));
  std::filesystem::create_directory(dir.file("target/child"));
  test::expect_error([&] { write_file_atomic(dir.file("target"), "x", 1); }, ErrorKind::Io, {"target"});
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(File, ReadsNonRegularFiles) {
  // /proc files report size 0 but have content: reading goes on to the end of file.
  if (!std::filesystem::exists("/proc/self/status")) GTEST_SKIP();
  EXPECT_NE(read_file_text("/proc/self/status").find("Name:"), std::string::npos);
}

}  // namespace
}  // namespace kiln
