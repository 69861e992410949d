#pragma once
// FileLock: an exclusive advisory lock (flock) that processes sharing a file take around read-modify-write
// updates of it (the timing cache).

#include <chrono>
#include <string>

namespace kiln {

/// Holds an exclusive flock on `path` from construction to destruction, waiting at most `wait` for other
/// holders (a holder that never lets go, such as a stopped process, costs a bounded wait, never a hang). The
/// lock file is created (mode 0600) when absent and left in place afterwards (removing it would let two
/// processes lock different files of the same name). Throws kiln::Error(Io) naming the path and the reason
/// when the lock file cannot be opened, is not a regular file (or is a symbolic link), is owned by another
/// user (who could hold it forever), or is still held by another process after `wait`.
class FileLock {
 public:
  explicit FileLock(const std::string& path, std::chrono::milliseconds wait = std::chrono::seconds(30));
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace kiln
