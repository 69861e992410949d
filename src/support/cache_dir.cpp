#include "kiln/support/cache_dir.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "unique_fd.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr size_t kKeySize = 32;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string home_dir() {
  std::string home = env("HOME");
  if (!home.empty()) return home;
  std::vector<char> buffer(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwuid_r(::geteuid(), &pw, buffer.data(), buffer.size(), &found) == 0 && found != nullptr &&
      found->pw_dir != nullptr) {
    return found->pw_dir;
  }
  return "";
}

// Creates the missing directories of `dir` with mode 0700 (existing ones are left as they are).
void create_private_dirs(const fs::path& dir) {
  std::error_code ec;
  if (dir.empty() || fs::exists(dir, ec)) return;
  create_private_dirs(dir.parent_path());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    KILN_FAIL(Io, "cannot create cache directory '", dir.string(), "': ", std::strerror(errno));
  }
}

// Fills `out` from the kernel's random source.
void random_bytes(uint8_t* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::getrandom(out + done, size - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      KILN_FAIL(Io, "cannot get random bytes for the cache key: ", std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
}

// Writes a fresh key to a private temporary file and links it to `path`: a process that loses the race to
// another one's link() reads that one's key, never a half-written file.
void create_key(const std::string& path) {
  uint8_t key[kKeySize];
  random_bytes(key, sizeof key);
  static std::atomic<uint64_t> counter{0};
  const std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  detail::UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) KILN_FAIL(Io, "cannot create cache key '", temp, "': ", std::strerror(errno));
  const bool written = ::write(fd.get(), key, sizeof key) == static_cast<ssize_t>(sizeof key) &&
                       ::fsync(fd.get()) == 0 && ::close(fd.release()) == 0;
  const int err = errno;
  const bool linked = written && (::link(temp.c_str(), path.c_str()) == 0 || errno == EEXIST);
  const int link_err = errno;
  ::unlink(temp.c_str());
  if (!written) KILN_FAIL(Io, "cannot write cache key '", temp, "': ", std::strerror(err));
  if (!linked) KILN_FAIL(Io, "cannot create cache key '", path, "': ", std::strerror(link_err));
}

}  // namespace

std::string user_cache_dir() {
  if (std::string dir = env("KILN_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return (fs::path(xdg) / "kiln").string();
  if (std::string home = home_dir(); !home.empty()) return (fs::path(home) / ".cache" / "kiln").string();
  return "";
}

void ensure_private_dir(const std::string& dir) {
  KILN_CHECK(!dir.empty(), Io, "no cache directory: set KILN_CACHE_DIR, XDG_CACHE_HOME or HOME");
  create_private_dirs(fs::path(dir));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    KILN_FAIL(Io, "cannot use cache directory '", dir, "': ", std::strerror(errno));
  KILN_CHECK(S_ISDIR(st.st_mode), Io, "cache directory '", dir, "' is ", file_kind(st.st_mode));
  KILN_CHECK(st.st_uid == ::geteuid(), Io, "cache directory '", dir, "' is owned by uid ", st.st_uid,
             ", not by this user (uid ", ::geteuid(), "): caches are per user");
  KILN_CHECK((st.st_mode & (S_IWGRP | S_IWOTH)) == 0, Io, "cache directory '", dir,
             "' is writable by group or others (mode ", std::oct, (st.st_mode & 07777), std::dec,
             "): caches are per user (chmod go-w it, or choose another directory)");
}

std::vector<uint8_t> cache_key(const std::string& dir) {
  ensure_private_dir(dir);
  const std::string path = (fs::path(dir) / kCacheKeyFile).string();
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    KILN_CHECK(errno == ENOENT, Io, "cannot use cache key '", path, "': ", std::strerror(errno));
    create_key(path);
    KILN_CHECK(::lstat(path.c_str(), &st) == 0, Io, "cannot use cache key '", path,
               "': ", std::strerror(errno));
  }
  KILN_CHECK(S_ISREG(st.st_mode), Io, "cache key '", path, "' is ", file_kind(st.st_mode),
             ", not a regular file");
  KILN_CHECK(st.st_uid == ::geteuid(), Io, "cache key '", path, "' is owned by uid ", st.st_uid,
             ", not by this user");
  KILN_CHECK((st.st_mode & 077) == 0, Io, "cache key '", path, "' is accessible to group or others (mode ",
             std::oct, (st.st_mode & 07777), std::dec, "): remove it, a new one is made");
  std::vector<uint8_t> key = read_file_bytes(path);
  KILN_CHECK(key.size() == kKeySize, Io, "cache key '", path, "' holds ", key.size(), " bytes, not ",
             kKeySize, ": remove it, a new one is made");
  return key;
}

std::vector<uint8_t> user_cache_key() { return cache_key(user_cache_dir()); }

}  // namespace kiln
