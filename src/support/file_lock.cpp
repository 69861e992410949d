#include "kiln/support/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "unique_fd.h"

namespace kiln {

FileLock::FileLock(const std::string& path) {
  // O_NONBLOCK: a FIFO planted at the path must not block the open; fstat then refuses it.
  detail::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (fd.get() < 0) KILN_FAIL(Io, "cannot open lock file '", path, "': ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    KILN_FAIL(Io, "cannot stat lock file '", path, "': ", std::strerror(errno));
  KILN_CHECK(S_ISREG(st.st_mode), Io, "lock file '", path, "' is ", file_kind(st.st_mode),
             ", not a regular file");
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) KILN_FAIL(Io, "cannot lock '", path, "': ", std::strerror(errno));
  }
  fd_ = fd.release();
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

}  // namespace kiln
