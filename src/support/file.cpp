#include "kiln/support/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "kiln/support/error.h"
#include "unique_fd.h"

namespace kiln {

namespace {

using detail::UniqueFd;

std::string errno_text(int err) { return std::strerror(err); }

std::atomic<uint64_t> g_temp_counter{0};

// Writes all of `size` bytes, retrying on EINTR and short writes; false (errno set) on failure.
bool write_all(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, p + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// An existing character device (/dev/null) is written in place: it is neither truncated nor replaced.
void write_in_place(const std::string& path, const void* data, size_t size) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) KILN_FAIL(Io, "cannot open '", path, "' for writing: ", errno_text(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) KILN_FAIL(Io, "cannot stat '", path, "': ", errno_text(errno));
  KILN_CHECK(S_ISCHR(st.st_mode), Io, "refusing to write '", path, "': it is ", file_kind(st.st_mode),
             ", not a regular file");
  if (!write_all(fd.get(), data, size)) KILN_FAIL(Io, "cannot write '", path, "': ", errno_text(errno));
  if (::close(fd.release()) != 0) KILN_FAIL(Io, "cannot close '", path, "': ", errno_text(errno));
}

// What may happen to an existing `path` before a write: nothing exists (or a regular file: replace it), a
// character device (write in place); anything else is refused.
enum class Target { Replace, InPlace };

Target check_write_target(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Target::Replace;
    KILN_FAIL(Io, "cannot write '", path, "': ", errno_text(errno));
  }
  if (S_ISREG(st.st_mode)) return Target::Replace;
  if (S_ISCHR(st.st_mode)) return Target::InPlace;
  KILN_FAIL(Io, "refusing to write '", path, "': it is ", file_kind(st.st_mode),
            S_ISLNK(st.st_mode) ? " (Kiln replaces only regular files; name the link's target)"
                                : ", not a regular file");
}

}  // namespace

const char* file_kind(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not a regular file";
  }
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  // Look before opening: opening a device can have effects of its own. O_NONBLOCK keeps a FIFO swapped in
  // meanwhile from blocking the open; fstat of the opened descriptor is what decides.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    KILN_FAIL(Io, "cannot read '", path, "': it is ", file_kind(st.st_mode), ", not a regular file");
  }
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) KILN_FAIL(Io, "cannot open '", path, "': ", errno_text(errno));
  if (::fstat(fd.get(), &st) != 0) KILN_FAIL(Io, "cannot stat '", path, "': ", errno_text(errno));
  if (!S_ISREG(st.st_mode)) {
    KILN_FAIL(Io, "cannot read '", path, "': it is ", file_kind(st.st_mode), ", not a regular file");
  }

  // Read at most the size the file had when opened: a file that grows meanwhile cannot make the read endless.
  const auto size = static_cast<size_t>(st.st_size);
  std::vector<uint8_t> bytes;
  try {
    bytes.resize(size);
  } catch (const std::bad_alloc&) {
    KILN_FAIL(Io, "cannot read '", path, "': out of memory for its ", size, " bytes");
  }
  size_t used = 0;
  while (used < size) {
    ssize_t n = ::read(fd.get(), bytes.data() + used, size - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      KILN_FAIL(Io, "cannot read '", path, "': ", errno_text(errno));
    }
    if (n == 0) break;  // the file shrank meanwhile
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
  if (check_write_target(path) == Target::InPlace) return write_in_place(path, data, size);

  std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_temp_counter++);
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (fd.get() < 0) KILN_FAIL(Io, "cannot create '", temp, "' (to write '", path, "'): ", errno_text(errno));

  auto fail = [&](const char* what, int err) {
    if (fd.get() >= 0) ::close(fd.release());
    ::unlink(temp.c_str());
    KILN_FAIL(Io, "cannot ", what, " '", path, "': ", errno_text(err));
  };
  if (!write_all(fd.get(), data, size)) fail("write", errno);
  // Flush to disk before the rename so that a crash leaves either the old file or the complete new one.
  if (::fsync(fd.get()) != 0 && errno != EINVAL && errno != EROFS) fail("sync", errno);
  if (::close(fd.release()) != 0) fail("close", errno);
  // The target is looked at again right before the rename: what appeared meanwhile is not replaced either.
  try {
    if (check_write_target(path) == Target::InPlace) {
      ::unlink(temp.c_str());
      return write_in_place(path, data, size);
    }
  } catch (const Error&) {
    ::unlink(temp.c_str());
    throw;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) fail("rename the temporary file onto", errno);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace kiln
