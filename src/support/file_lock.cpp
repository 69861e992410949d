#include "kiln/support/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "unique_fd.h"

namespace kiln {

FileLock::FileLock(const std::string& path, std::chrono::milliseconds wait) {
  // O_NONBLOCK: a FIFO planted at the path must not block the open; fstat then refuses it.
  detail::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (fd.get() < 0) KILN_FAIL(Io, "cannot open lock file '", path, "': ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    KILN_FAIL(Io, "cannot stat lock file '", path, "': ", std::strerror(errno));
  KILN_CHECK(S_ISREG(st.st_mode), Io, "lock file '", path, "' is ", file_kind(st.st_mode),
             ", not a regular file");
  KILN_CHECK(st.st_uid == ::geteuid(), Io, "lock file '", path, "' is owned by uid ", st.st_uid,
             ", not by this user (uid ", ::geteuid(), ")");
  // Polled rather than a blocking flock, so that the wait is bounded.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      KILN_FAIL(Io, "cannot lock '", path, "': ", std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      KILN_FAIL(Io, "cannot lock '", path, "': another process has held it for more than ",
                std::chrono::duration_cast<std::chrono::seconds>(wait).count(), " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  fd_ = fd.release();
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

}  // namespace kiln
