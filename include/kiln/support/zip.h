#pragma once
// Bounds-checked zip archive reading (stored and deflated entries, zip64) and writing (stored, aligned).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct ZipEntry {
  std::string name;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint32_t crc32 = 0;
};

/// Reads a zip archive from a file (the whole file is read into memory) or from bytes. Every offset and size
/// is checked against the archive's bounds; malformed archives throw kiln::Error(InvalidInput) naming the
/// archive and the entry.
class ZipReader {
 public:
  static ZipReader open(const std::string& path);
  static ZipReader from_bytes(std::vector<uint8_t> bytes, std::string label = "<memory>");

  const std::vector<ZipEntry>& entries() const { return entries_; }
  /// Entry by exact name, or nullptr.
  const ZipEntry* find(const std::string& name) const;
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  /// The entry's uncompressed bytes (inflated when deflated; CRC-32 checked). Throws when absent or corrupt.
  std::vector<uint8_t> read(const std::string& name) const;
  std::string read_text(const std::string& name) const;
  /// The archive's label (its path) for error messages.
  const std::string& label() const { return label_; }

 private:
  std::string label_;
  std::shared_ptr<const std::vector<uint8_t>> bytes_;
  std::vector<ZipEntry> entries_;
};

/// Writes a zip archive with stored (uncompressed) entries whose data starts 64-byte aligned (as torch
/// writes .pt2), zip64 when needed. write_file() writes to a temporary file beside the target and renames,
/// so a failure leaves no partial file behind.
class ZipWriter {
 public:
  void add(const std::string& name, const std::vector<uint8_t>& data);
  void add(const std::string& name, const std::string& text);
  std::vector<uint8_t> finish() const;
  void write_file(const std::string& path) const;

 private:
  std::vector<std::pair<std::string, std::vector<uint8_t>>> entries_;
};

}  // namespace kiln
