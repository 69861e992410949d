#include "kiln/support/file_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "kiln/support/error.h"
#include "support/test_util.h"

namespace kiln {
namespace {

// Whether another open file description could take the lock now.
bool lock_is_free(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

TEST(FileLock, HeldUntilDestroyed) {
  test::TempDir dir;
  const std::string path = dir.file("x.lock");
  {
    FileLock lock(path);
    EXPECT_FALSE(lock_is_free(path));
  }
  EXPECT_TRUE(lock_is_free(path));
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
}

TEST(FileLock, RefusesNonRegularLockFiles) {
  test::TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  test::expect_error([&] { FileLock lock(dir.file("fifo")); }, ErrorKind::Io, {"fifo", "a FIFO"});
  std::filesystem::create_symlink(dir.file("elsewhere"), dir.file("link"));
  test::expect_error([&] { FileLock lock(dir.file("link")); }, ErrorKind::Io, {"link"});
  EXPECT_FALSE(std::filesystem::exists(dir.file("elsewhere")));
}

// A lock another process never lets go of (a stopped compile, a user who holds it on purpose) costs a bounded
// wait, then an error, never a hang.
TEST(FileLock, GivesUpAfterItsWait) {
  test::TempDir dir;
  const std::string path = dir.file("x.lock");
  FileLock held(path);
  test::expect_error([&] { FileLock again(path, std::chrono::milliseconds(0)); }, ErrorKind::Io,
                     {"x.lock", "another process has held it"});
}

}  // namespace
}  // namespace kiln
