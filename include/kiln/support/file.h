#pragma once
// Whole-file I/O with clear errors, and atomic writes. Every file Kiln reads and writes goes through here, so
// the rules are checked in one place (docs/limits.md):
// - Reads take regular files only: a FIFO, device node, socket or directory is an error, never a block or an
//   endless read; a regular file is read up to the size it had when opened.
// - Writes go to regular files only: a temporary file beside the target is renamed over it, so a failed write
//   leaves the old file or none, never a partial or empty one. An existing character device (/dev/null) is
//   written in place instead (it is never replaced); any other existing non-regular path (FIFO, socket, block
//   device, directory) and a symbolic link are refused.

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// Reads a whole regular file. Throws kiln::Error(Io) naming the path and the reason (strerror, or what kind
/// of non-regular file it is) when it cannot.
std::vector<uint8_t> read_file_bytes(const std::string& path);
std::string read_file_text(const std::string& path);

/// Writes `data` to `path` by the rules above (temporary "<path>.tmp.<pid>.<n>", synced, renamed). Throws
/// kiln::Error(Io) naming the path and the reason (strerror) on any failure, leaving no file behind.
void write_file_atomic(const std::string& path, const void* data, size_t size);
inline void write_file_atomic(const std::string& path, const std::vector<uint8_t>& data) {
  write_file_atomic(path, data.data(), data.size());
}

/// True when both paths exist and name the same file (same device and inode, symbolic links followed).
bool same_file(const std::string& a, const std::string& b);

/// "a directory", "a FIFO", "a character device", ...: what kind of file `mode` (struct stat's st_mode) says.
const char* file_kind(unsigned mode);

}  // namespace kiln
