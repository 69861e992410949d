#pragma once
// Whole-file I/O with clear errors, and atomic writes.

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// Reads a whole file. Throws kiln::Error(Io) naming the path when it cannot.
std::vector<uint8_t> read_file_bytes(const std::string& path);
std::string read_file_text(const std::string& path);
/// Writes to "<path>.tmp.<pid>.<n>" then renames over `path`; on failure removes the temporary file.
void write_file_atomic(const std::string& path, const void* data, size_t size);
inline void write_file_atomic(const std::string& path, const std::vector<uint8_t>& data) {
  write_file_atomic(path, data.data(), data.size());
}

}  // namespace kiln
