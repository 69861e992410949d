#include "kiln/support/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "kiln/support/error.h"

namespace kiln {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Closes a descriptor when it goes out of scope (errors on close are ignored here: callers that care about
// close's result call release() and close themselves).
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

std::atomic<uint64_t> g_temp_counter{0};

}  // namespace

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) KILN_FAIL(Io, "cannot open '", path, "': ", errno_text(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) KILN_FAIL(Io, "cannot stat '", path, "': ", errno_text(errno));
  if (S_ISDIR(st.st_mode)) KILN_FAIL(Io, "cannot read '", path, "': it is a directory");

  // The size from fstat is a hint only (pipes and /proc files report 0): read until end of file. One byte
  // more than the expected size lets the read that sees the end of file happen without growing the buffer.
  std::vector<uint8_t> bytes(S_ISREG(st.st_mode) && st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1
                                                                   : 65536);
  size_t used = 0;
  for (;;) {
    if (used == bytes.size()) bytes.resize(bytes.size() * 2);
    ssize_t n = ::read(fd.get(), bytes.data() + used, bytes.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      KILN_FAIL(Io, "cannot read '", path, "': ", errno_text(errno));
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  bytes.resize(used);
  return bytes;
}

std::string read_file_text(const std::string& path) {
  std::vector<uint8_t> bytes = read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

void write_file_atomic(const std::string& path, const void* data, size_t size) {
  KILN_CHECK(!path.empty(), Io, "cannot write a file with an empty path");
  std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_temp_counter++);
  Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (fd.get() < 0) KILN_FAIL(Io, "cannot create '", temp, "' (to write '", path, "'): ", errno_text(errno));

  auto fail = [&](const char* what, int err) {
    ::close(fd.release());
    ::unlink(temp.c_str());
    KILN_FAIL(Io, "cannot ", what, " '", path, "': ", errno_text(err));
  };
  const auto* p = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd.get(), p + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write", errno);
    }
    done += static_cast<size_t>(n);
  }
  // Flush to disk before the rename so that a crash leaves either the old file or the complete new one.
  if (::fsync(fd.get()) != 0 && errno != EINVAL && errno != EROFS) fail("sync", errno);
  if (::close(fd.release()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    KILN_FAIL(Io, "cannot close '", path, "': ", errno_text(err));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    KILN_FAIL(Io, "cannot rename '", temp, "' to '", path, "': ", errno_text(err));
  }
}

}  // namespace kiln
