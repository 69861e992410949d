#pragma once
// Bounds-checked zip archive reading (stored and deflated entries, zip64) and writing (stored, aligned).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kiln {

struct ZipEntry {
  std::string name;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint32_t crc32 = 0;
  /// General-purpose flags from the central directory (bit 0: encrypted, bit 3: data descriptor).
  uint16_t flags = 0;
  /// Offset of the entry's (compressed) data in the archive, just past its local header.
  uint64_t data_offset = 0;
};

/// Reads a zip archive from a file (the whole file is read into memory) or from bytes. Every offset and size
/// is checked against the archive's bounds; malformed archives throw kiln::Error(InvalidInput) whose message
/// names the archive and the entry.
///
/// Opening checks the structure: the end-of-central-directory record (zip64 record and locator when
/// present), every central directory entry (zip64 extra fields), every local header (its name must match
/// the central directory's) and that every entry's data lies inside the archive, before the central
/// directory. Entry names must be unique, non-empty, relative and free of ".." components and NUL bytes.
/// Data descriptors (flag bit 3) are fine: sizes and CRC come from the central directory.
///
/// Opening also bounds what inflating may cost: the declared uncompressed sizes of all deflated entries
/// together may not exceed inflate_budget(archive size) (docs/limits.md), so memory stays a small multiple of
/// the file's real size whatever its metadata claims.
///
/// read() inflates deflated entries into a buffer that grows with the actual output (never allocated from
/// a declared size alone) and stops at the declared size, checks the output against the declared size (which
/// may not exceed kMaxDeflateRatio times the compressed size, nor kMaxInflatedSize) and the CRC-32. Encrypted
/// entries and compression methods other than stored (0) and deflate (8) throw kiln::Error(Unsupported) when
/// read; multi-disk archives throw it when opened.
class ZipReader {
 public:
  /// Deflate cannot expand data by more than about 1032:1; a larger declared ratio is corruption.
  static constexpr uint64_t kMaxDeflateRatio = 1032;
  /// The largest uncompressed size of a deflated entry Kiln will inflate (stored entries are bounded by the
  /// archive's size).
  static constexpr uint64_t kMaxInflatedSize = uint64_t{16} << 30;
  /// Deflated entries may declare in all at most kInflateRatio times the archive's size uncompressed, or
  /// kMinInflateBudget bytes when that is more. Real data (weights, JSON, arrays) compresses far less; an
  /// archive of mostly zeros beyond this must be stored uncompressed (numpy.savez rather than
  /// savez_compressed).
  static constexpr uint64_t kInflateRatio = 64;
  static constexpr uint64_t kMinInflateBudget = uint64_t{64} << 20;
  static constexpr uint64_t inflate_budget(uint64_t archive_size) {
    if (archive_size > UINT64_MAX / kInflateRatio) return UINT64_MAX;
    return archive_size > kMinInflateBudget / kInflateRatio ? archive_size * kInflateRatio
                                                            : kMinInflateBudget;
  }

  static ZipReader open(const std::string& path);
  static ZipReader from_bytes(std::vector<uint8_t> bytes, std::string label = "<memory>");

  const std::vector<ZipEntry>& entries() const { return entries_; }
  /// Entry by exact name, or nullptr.
  const ZipEntry* find(const std::string& name) const;
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  /// The entry's uncompressed bytes (inflated when deflated; CRC-32 checked). Throws when absent or corrupt.
  std::vector<uint8_t> read(const std::string& name) const;
  /// The same, for an entry of entries() (looked up by name).
  std::vector<uint8_t> read(const ZipEntry& entry) const;
  std::string read_text(const std::string& name) const;
  /// The archive's label (its path) for error messages.
  const std::string& label() const { return label_; }

 private:
  std::vector<uint8_t> read_checked(const ZipEntry& entry) const;

  std::string label_;
  std::shared_ptr<const std::vector<uint8_t>> bytes_;
  std::vector<ZipEntry> entries_;
  std::unordered_map<std::string, size_t> index_;
};

/// Writes a zip archive with stored (uncompressed) entries whose data starts 64-byte aligned (as torch
/// writes .pt2; the padding is a local-header extra field with id "FB"), zip64 when needed. The output is
/// deterministic (fixed timestamps). write_file() writes to a temporary file beside the target and renames,
/// so a failure leaves no partial file behind. add() throws kiln::Error(InvalidInput) on a name that the
/// reader would reject (empty, absolute, with a ".." component or NUL, longer than 65535 bytes) or a
/// duplicate name.
class ZipWriter {
 public:
  static constexpr uint64_t kAlignment = 64;

  void add(const std::string& name, const std::vector<uint8_t>& data);
  void add(const std::string& name, std::vector<uint8_t>&& data);
  void add(const std::string& name, const std::string& text);
  /// Writes zip64 structures (extra fields, zip64 end records) even where the sizes would not need them.
  void set_force_zip64(bool force) { force_zip64_ = force; }
  std::vector<uint8_t> finish() const;
  void write_file(const std::string& path) const;

 private:
  std::vector<std::pair<std::string, std::vector<uint8_t>>> entries_;
  std::unordered_set<std::string> names_;
  bool force_zip64_ = false;
};

}  // namespace kiln
