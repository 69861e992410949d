#include "kiln/support/file.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>

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

// A FIFO, a device, a directory or a socket given as an input is a one-line error naming what it is, never a
// read that blocks (a FIFO without a writer) or never ends (/dev/zero until memory runs out).
TEST(File, ReadRefusesNonRegularFiles) {
  test::TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  test::expect_error([&] { read_file_bytes(fifo); }, ErrorKind::Io, {"fifo", "a FIFO, not a regular file"});
  test::expect_error([&] { read_file_bytes("/dev/zero"); }, ErrorKind::Io,
                     {"/dev/zero", "a character device"});
  test::expect_error([&] { read_file_text(dir.path().string()); }, ErrorKind::Io,
                     {dir.path().string(), "a directory"});
  const std::string socket_path = dir.file("sock");
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof(addr.sun_path));
  std::strcpy(addr.sun_path, socket_path.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  test::expect_error([&] { read_file_bytes(socket_path); }, ErrorKind::Io, {"sock", "a socket"});
  ::close(s);
}

// A character device made here (root only) with the numbers of /dev/null or /dev/full: the real ones are not
// put at risk by a test of the code that once replaced them.
std::optional<std::string> make_char_device(const test::TempDir& dir, const std::string& name, int minor) {
  const std::string path = dir.file(name);
  if (::mknod(path.c_str(), S_IFCHR | 0666, ::makedev(1, minor)) != 0) return std::nullopt;
  return path;
}

bool is_char_device(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// Writing to an existing character device writes in place: the node is never replaced by a regular file (as
// root, `-o /dev/null` once turned /dev/null into a regular file for the whole machine).
TEST(File, WriteToCharacterDeviceWritesInPlace) {
  test::TempDir dir;
  std::optional<std::string> null_dev = make_char_device(dir, "null", 3);
  std::optional<std::string> full_dev = make_char_device(dir, "full", 7);
  if (!null_dev || !full_dev) GTEST_SKIP() << "mknod needs root";
  write_file_atomic(*null_dev, "data", 4);
  EXPECT_TRUE(is_char_device(*null_dev));
  // A full disk (/dev/full: every write fails with ENOSPC) is an error that says why.
  test::expect_error([&] { write_file_atomic(*full_dev, "data", 4); }, ErrorKind::Io,
                     {"full", std::strerror(ENOSPC)});
  EXPECT_TRUE(is_char_device(*full_dev));
  EXPECT_EQ(files_in(dir.path()), 2u);
}

// A FIFO, a directory and a symbolic link are refused and left as they were, with no temporary file left.
TEST(File, WriteRefusesFifoDirectoryAndSymlink) {
  test::TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  test::expect_error([&] { write_file_atomic(fifo, "x", 1); }, ErrorKind::Io, {"fifo", "a FIFO"});
  std::filesystem::create_directory(dir.file("target"));
  test::expect_error([&] { write_file_atomic(dir.file("target"), "x", 1); }, ErrorKind::Io,
                     {"target", "a directory"});
  write_file_atomic(dir.file("real"), "old", 3);
  std::filesystem::create_symlink(dir.file("real"), dir.file("link"));
  test::expect_error([&] { write_file_atomic(dir.file("link"), "new", 3); }, ErrorKind::Io,
                     {"link", "a symbolic link"});
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link")));
  EXPECT_EQ(read_file_text(dir.file("real")), "old");
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_EQ(files_in(dir.path()), 4u);
}

// A write that fails part way (here: the file size limit, as a full disk would) says why and leaves no file,
// not even an empty one.
TEST(File, WriteBeyondFileSizeLimitLeavesNothing) {
  test::TempDir dir;
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 1000;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::vector<uint8_t> data = test::lcg_bytes(5000, 9);
  bool threw = false;
  try {
    write_file_atomic(dir.file("big.bin"), data);
  } catch (const Error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find(std::strerror(EFBIG)), std::string::npos) << e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(files_in(dir.path()), 0u);
}

TEST(File, SameFileFollowsLinks) {
  test::TempDir dir;
  write_file_atomic(dir.file("a"), "a", 1);
  write_file_atomic(dir.file("b"), "a", 1);
  std::filesystem::create_symlink(dir.file("a"), dir.file("link"));
  std::filesystem::create_hard_link(dir.file("a"), dir.file("hard"));
  EXPECT_TRUE(same_file(dir.file("a"), dir.file("link")));
  EXPECT_TRUE(same_file(dir.file("a"), dir.file("hard")));
  EXPECT_TRUE(same_file(dir.file("a"), dir.path().string() + "/./a"));
  EXPECT_FALSE(same_file(dir.file("a"), dir.file("b")));
  EXPECT_FALSE(same_file(dir.file("a"), dir.file("missing")));
}

}  // namespace
}  // namespace kiln
