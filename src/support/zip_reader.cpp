// ZipReader: every structure is read only after its offset and size were checked against the archive.
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/zip.h"
#include "zip_format.h"

namespace kiln {

using namespace zip_format;

namespace {

// Formats "zip archive 'LABEL': entry 'NAME': " (the entry part only when there is one).
std::string where(const std::string& label, const std::string& entry) {
  std::string text = "zip archive '" + label + "'";
  if (!entry.empty()) text += ": entry '" + entry + "'";
  return text + ": ";
}

template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, const std::string& label, const std::string& entry, Args&&... args) {
  throw Error(kind, where(label, entry) + detail::concat(std::forward<Args>(args)...));
}

std::string hex32(uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

// Sums offsets without wrapping: an overflow means the values cannot describe anything inside the archive.
bool add_ok(uint64_t a, uint64_t b, uint64_t* sum) { return !__builtin_add_overflow(a, b, sum); }

// Reads one archive's structures; every access is checked against the archive's size first.
class Parser {
 public:
  Parser(const std::vector<uint8_t>& bytes, const std::string& label)
      : p_(bytes.data()), size_(bytes.size()), label_(label) {}

  void parse(std::vector<ZipEntry>* entries, std::unordered_map<std::string, size_t>* index) {
    find_end();
    read_central_directory(entries, index);
    check_inflate_budget(*entries);
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail_invalid(const std::string& entry, Args&&... args) const {
    fail(ErrorKind::InvalidInput, label_, entry, std::forward<Args>(args)...);
  }

  void find_end() {
    if (size_ < kEndSize) fail_invalid("", "not a zip archive (", size_, " bytes, too short for one)");
    // The end record sits at the very end, followed only by a comment of at most 65535 bytes.
    uint64_t last = size_ - kEndSize;
    uint64_t lowest = last > kMax16 ? last - kMax16 : 0;
    bool found = false;
    for (uint64_t pos = last + 1; pos-- > lowest;) {
      if (load32(p_ + pos) == kEndSignature && load16(p_ + pos + 20) <= size_ - pos - kEndSize) {
        end_offset_ = pos;
        found = true;
        break;
      }
    }
    if (!found) fail_invalid("", "not a zip archive (no end-of-central-directory record)");

    const uint8_t* end = p_ + end_offset_;
    uint16_t disk = load16(end + 4);
    uint16_t cd_disk = load16(end + 6);
    uint16_t count_on_disk = load16(end + 8);
    uint16_t count = load16(end + 10);
    uint32_t cd_size = load32(end + 12);
    uint32_t cd_offset = load32(end + 16);
    entry_count_ = count;
    cd_size_ = cd_size;
    cd_offset_ = cd_offset;
    cd_limit_ = end_offset_;

    bool has_locator = end_offset_ >= kZip64LocatorSize &&
                       load32(p_ + end_offset_ - kZip64LocatorSize) == kZip64LocatorSignature;
    bool needs_zip64 = count == kMax16 || count_on_disk == kMax16 || cd_size == kMax32 || cd_offset == kMax32;
    if (has_locator) {
      read_zip64_end();
    } else {
      if (needs_zip64) {
        fail_invalid("",
                     "the end-of-central-directory record has zip64 markers but there is no zip64 locator");
      }
      check_disks(disk, cd_disk, count_on_disk, count);
    }

    uint64_t cd_end = 0;
    if (!add_ok(cd_offset_, cd_size_, &cd_end) || cd_end > cd_limit_) {
      fail_invalid("", "the central directory (offset ", cd_offset_, ", ", cd_size_,
                   " bytes) does not fit before the end-of-central-directory record at ", cd_limit_);
    }
    // Each central directory header takes at least 46 bytes: a larger count cannot be true, and checking it
    // here keeps a hostile count from driving a large allocation.
    if (entry_count_ > cd_size_ / kCentralHeaderSize) {
      fail_invalid("", "the end-of-central-directory record claims ", entry_count_,
                   " entries but the central directory of ", cd_size_, " bytes holds at most ",
                   cd_size_ / kCentralHeaderSize);
    }
  }

  // The deflated entries together may declare at most ZipReader::inflate_budget(archive size) bytes: a few
  // megabytes that claim gigabytes are refused before anything is inflated.
  void check_inflate_budget(const std::vector<ZipEntry>& entries) const {
    const uint64_t budget = ZipReader::inflate_budget(size_);
    uint64_t total = 0;
    for (const ZipEntry& e : entries) {
      if (e.method != kMethodDeflate) continue;
      if (!add_ok(total, e.uncompressed_size, &total) || total > budget) {
        fail_invalid("", "the deflated entries declare more than ", budget, " bytes uncompressed (",
                     ZipReader::kInflateRatio, " times the archive's ", size_, " bytes, at least ",
                     ZipReader::kMinInflateBudget, "; docs/limits.md): refusing a likely decompression bomb");
      }
    }
  }

  void check_disks(uint64_t disk, uint64_t cd_disk, uint64_t count_on_disk, uint64_t count) const {
    if (disk != 0 || cd_disk != 0) {
      fail(ErrorKind::Unsupported, label_, "", "multi-disk zip archives are not supported");
    }
    if (count_on_disk != count) {
      fail_invalid("", "the end-of-central-directory record's entry counts disagree (", count_on_disk,
                   " on this disk, ", count, " in all)");
    }
  }

  void read_zip64_end() {
    uint64_t locator = end_offset_ - kZip64LocatorSize;
    const uint8_t* loc = p_ + locator;
    uint32_t record_disk = load32(loc + 4);
    uint64_t record_offset = load64(loc + 8);
    uint32_t disks = load32(loc + 16);
    if (record_disk != 0 || disks > 1) {
      fail(ErrorKind::Unsupported, label_, "", "multi-disk zip archives are not supported");
    }
    if (record_offset > locator || locator - record_offset < kZip64EndSize) {
      fail_invalid("", "the zip64 end-of-central-directory record offset ", record_offset,
                   " does not leave room for the record before its locator at ", locator);
    }
    const uint8_t* rec = p_ + record_offset;
    if (load32(rec) != kZip64EndSignature) {
      fail_invalid("", "no zip64 end-of-central-directory record at offset ", record_offset);
    }
    uint32_t disk = load32(rec + 16);
    uint32_t cd_disk = load32(rec + 20);
    uint64_t count_on_disk = load64(rec + 24);
    uint64_t count = load64(rec + 32);
    check_disks(disk, cd_disk, count_on_disk, count);
    entry_count_ = count;
    cd_size_ = load64(rec + 40);
    cd_offset_ = load64(rec + 48);
    cd_limit_ = record_offset;
  }

  void read_central_directory(std::vector<ZipEntry>* entries,
                              std::unordered_map<std::string, size_t>* index) {
    entries->reserve(static_cast<size_t>(entry_count_));
    uint64_t pos = cd_offset_;
    uint64_t cd_end = cd_offset_ + cd_size_;  // checked in find_end()
    for (uint64_t i = 0; i < entry_count_; ++i) {
      if (cd_end - pos < kCentralHeaderSize) {
        fail_invalid("", "central directory entry ", i, " of ", entry_count_, " at offset ", pos,
                     " runs past the end of the central directory");
      }
      const uint8_t* h = p_ + pos;
      if (load32(h) != kCentralHeaderSignature) {
        fail_invalid("", "bad signature for central directory entry ", i, " at offset ", pos);
      }
      uint64_t name_len = load16(h + 28);
      uint64_t extra_len = load16(h + 30);
      uint64_t comment_len = load16(h + 32);
      uint64_t total = kCentralHeaderSize + name_len + extra_len + comment_len;
      if (cd_end - pos < total) {
        fail_invalid("", "central directory entry ", i, " at offset ", pos,
                     " (name, extra field and comment) runs past the end of the central directory");
      }
      ZipEntry entry;
      entry.name.assign(reinterpret_cast<const char*>(h + kCentralHeaderSize), name_len);
      entry.flags = load16(h + 8);
      entry.method = load16(h + 10);
      entry.crc32 = load32(h + 16);
      entry.compressed_size = load32(h + 20);
      entry.uncompressed_size = load32(h + 24);
      uint16_t disk_start = load16(h + 34);
      entry.local_header_offset = load32(h + 42);

      const char* problem = name_problem(entry.name);
      if (*problem != '\0') fail_invalid(entry.name, problem);

      read_zip64_extra(h + kCentralHeaderSize + name_len, extra_len, disk_start, &entry);
      check_local_header(&entry);

      if (!index->emplace(entry.name, entries->size()).second) {
        fail_invalid(entry.name, "duplicate entry name");
      }
      entries->push_back(std::move(entry));
      pos += total;
    }
  }

  // Replaces the 32-bit fields that hold 0xFFFFFFFF (0xFFFF for the disk) by their zip64 values, which the
  // zip64 extra field lists in a fixed order, each only when its 32-bit field is the marker.
  void read_zip64_extra(const uint8_t* extra, uint64_t extra_len, uint16_t disk_start, ZipEntry* entry) {
    bool want_usize = entry->uncompressed_size == kMax32;
    bool want_csize = entry->compressed_size == kMax32;
    bool want_offset = entry->local_header_offset == kMax32;
    bool want_disk = disk_start == kMax16;
    bool found = false;
    uint64_t pos = 0;
    while (extra_len - pos >= 4) {
      uint16_t id = load16(extra + pos);
      uint64_t len = load16(extra + pos + 2);
      if (extra_len - pos - 4 < len) {
        fail_invalid(entry->name, "extra field block (id ", id, ", ", len,
                     " bytes) runs past the extra field");
      }
      const uint8_t* data = extra + pos + 4;
      if (id == kZip64ExtraId && !found) {
        found = true;
        uint64_t needed = 8 * (want_usize + want_csize + want_offset) + 4 * want_disk;
        if (len < needed) {
          fail_invalid(entry->name, "zip64 extra field of ", len, " bytes is too short (", needed,
                       " needed)");
        }
        const uint8_t* q = data;
        if (want_usize) entry->uncompressed_size = load64(q), q += 8;
        if (want_csize) entry->compressed_size = load64(q), q += 8;
        if (want_offset) entry->local_header_offset = load64(q), q += 8;
        if (want_disk) disk_start = static_cast<uint16_t>(load32(q) == 0 ? 0 : 1);
      }
      pos += 4 + len;
    }
    if (!found && (want_usize || want_csize || want_offset || want_disk)) {
      fail_invalid(entry->name, "has zip64 size or offset markers but no zip64 extra field");
    }
    if (disk_start != 0) {
      fail(ErrorKind::Unsupported, label_, entry->name, "multi-disk zip archives are not supported");
    }
  }

  // Checks the local header and that the entry's data lies before the central directory; sets data_offset.
  void check_local_header(ZipEntry* entry) {
    uint64_t offset = entry->local_header_offset;
    if (offset > cd_offset_ || cd_offset_ - offset < kLocalHeaderSize) {
      fail_invalid(entry->name, "local header offset ", offset, " is not before the central directory at ",
                   cd_offset_);
    }
    const uint8_t* h = p_ + offset;
    if (load32(h) != kLocalHeaderSignature) {
      fail_invalid(entry->name, "bad local header signature at offset ", offset);
    }
    uint64_t name_len = load16(h + 26);
    uint64_t extra_len = load16(h + 28);
    uint64_t data_offset = offset + kLocalHeaderSize + name_len + extra_len;
    uint64_t data_end = 0;
    if (data_offset > cd_offset_ || !add_ok(data_offset, entry->compressed_size, &data_end) ||
        data_end > cd_offset_) {
      fail_invalid(entry->name, "data (", entry->compressed_size, " bytes after the local header at offset ",
                   offset, ") runs past the start of the central directory at ", cd_offset_);
    }
    if (name_len != entry->name.size() ||
        std::memcmp(h + kLocalHeaderSize, entry->name.data(), entry->name.size()) != 0) {
      fail_invalid(entry->name, "the local header's name differs from the central directory's");
    }
    if (entry->method == kMethodStored && entry->compressed_size != entry->uncompressed_size) {
      fail_invalid(entry->name, "stored entry has compressed size ", entry->compressed_size,
                   " but uncompressed size ", entry->uncompressed_size);
    }
    entry->data_offset = data_offset;
  }

  const uint8_t* p_;
  uint64_t size_;
  const std::string& label_;
  uint64_t end_offset_ = 0;
  uint64_t entry_count_ = 0;
  uint64_t cd_size_ = 0;
  uint64_t cd_offset_ = 0;
  uint64_t cd_limit_ = 0;  // where the central directory must end: the (zip64) end record
};

// Ends a zlib stream however the inflation ends.
struct InflateStream {
  z_stream zs{};
  bool initialized = false;
  ~InflateStream() {
    if (initialized) inflateEnd(&zs);
  }
};

std::vector<uint8_t> inflate_entry(const uint8_t* data, const ZipEntry& entry, const std::string& label) {
  const uint64_t csize = entry.compressed_size;
  const uint64_t usize = entry.uncompressed_size;
  auto bad = [&](auto&&... args) { fail(ErrorKind::InvalidInput, label, entry.name, args...); };
  if (usize > ZipReader::kMaxInflatedSize) {
    bad("declared uncompressed size ", usize, " exceeds the limit of ", ZipReader::kMaxInflatedSize,
        " bytes");
  }
  if (usize > csize * ZipReader::kMaxDeflateRatio + 1024) {
    bad("declared uncompressed size ", usize, " is implausible for ", csize, " bytes of deflate data");
  }

  InflateStream stream;
  z_stream& zs = stream.zs;
  // Raw deflate (negative window bits): zip entries carry no zlib header.
  if (inflateInit2(&zs, -15) != Z_OK) KILN_FAIL(Internal, "zlib inflateInit2 failed");
  stream.initialized = true;

  constexpr uint64_t kChunk = uint64_t{1} << 30;  // zlib counts in 32-bit units
  std::vector<uint8_t> out;
  // Start at a size that real data usually reaches and grow by doubling: a hostile declared size then
  // costs memory only in proportion to what the data really inflates to.
  out.resize(static_cast<size_t>(std::min<uint64_t>(usize, std::max<uint64_t>(csize * 4, 1 << 16))));
  uint64_t fed = 0;
  uint64_t produced = 0;
  uint8_t probe = 0;
  for (;;) {
    if (zs.avail_in == 0 && fed < csize) {
      uint64_t chunk = std::min(csize - fed, kChunk);
      zs.next_in = const_cast<Bytef*>(data + fed);
      zs.avail_in = static_cast<uInt>(chunk);
      fed += chunk;
    }
    bool probing = false;
    if (produced == out.size()) {
      if (out.size() < usize) {
        out.resize(static_cast<size_t>(std::min<uint64_t>(usize, out.size() * 2 + 1)));
      } else {
        // The declared size is reached: one more byte of output means the entry is longer than declared.
        probing = true;
      }
    }
    if (probing) {
      zs.next_out = &probe;
      zs.avail_out = 1;
    } else {
      zs.next_out = out.data() + produced;
      zs.avail_out = static_cast<uInt>(std::min<uint64_t>(out.size() - produced, kChunk));
    }
    uInt avail_before = zs.avail_out;
    int ret = inflate(&zs, Z_NO_FLUSH);
    uint64_t wrote = avail_before - zs.avail_out;
    if (probing && wrote > 0) {
      bad("inflates to more than its declared uncompressed size of ", usize, " bytes");
    }
    if (!probing) produced += wrote;
    if (ret == Z_STREAM_END) break;
    if (ret == Z_OK) continue;
    if (ret == Z_BUF_ERROR && zs.avail_in == 0 && fed == csize) {
      bad("deflate data is truncated (", csize, " bytes inflate to ", produced, " of ", usize, " bytes)");
    }
    bad("corrupt deflate data (zlib: ", zs.msg != nullptr ? zs.msg : "error " + std::to_string(ret), ")");
  }
  if (zs.avail_in != 0 || fed != csize) {
    bad("the deflate stream ends after ", fed - zs.avail_in, " of its ", csize, " compressed bytes");
  }
  if (produced != usize) bad("inflates to ", produced, " bytes but declares ", usize);
  return out;
}

}  // namespace

ZipReader ZipReader::open(const std::string& path) { return from_bytes(read_file_bytes(path), path); }

ZipReader ZipReader::from_bytes(std::vector<uint8_t> bytes, std::string label) {
  ZipReader reader;
  reader.label_ = std::move(label);
  reader.bytes_ = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  Parser(*reader.bytes_, reader.label_).parse(&reader.entries_, &reader.index_);
  return reader;
}

const ZipEntry* ZipReader::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

std::vector<uint8_t> ZipReader::read(const std::string& name) const {
  const ZipEntry* entry = find(name);
  if (entry == nullptr) fail(ErrorKind::InvalidInput, label_, name, "no such entry");
  return read_checked(*entry);
}

std::vector<uint8_t> ZipReader::read(const ZipEntry& entry) const {
  // Only this archive's own entries have offsets that were checked against its bounds: look the name up
  // rather than trusting the fields of the entry given.
  const ZipEntry* own = find(entry.name);
  if (own == nullptr) fail(ErrorKind::InvalidInput, label_, entry.name, "no such entry");
  return read_checked(*own);
}

std::vector<uint8_t> ZipReader::read_checked(const ZipEntry& entry) const {
  if (entry.flags & (kFlagEncrypted | kFlagStrongEncryption)) {
    fail(ErrorKind::Unsupported, label_, entry.name, "encrypted zip entries are not supported");
  }
  const uint8_t* data = bytes_->data() + entry.data_offset;
  std::vector<uint8_t> out;
  if (entry.method == kMethodStored) {
    out.assign(data, data + entry.compressed_size);
  } else if (entry.method == kMethodDeflate) {
    // Some writers store an empty file as deflate with no data at all rather than an empty deflate block.
    if (entry.compressed_size != 0 || entry.uncompressed_size != 0) out = inflate_entry(data, entry, label_);
  } else {
    fail(ErrorKind::Unsupported, label_, entry.name, "compression method ", entry.method,
         " is not supported (Kiln reads stored (0) and deflate (8) entries)");
  }
  uint32_t crc = crc32_of(out.data(), out.size());
  if (crc != entry.crc32) {
    fail(ErrorKind::InvalidInput, label_, entry.name, "CRC-32 mismatch (data has ", hex32(crc),
         ", the directory says ", hex32(entry.crc32), ")");
  }
  return out;
}

std::string ZipReader::read_text(const std::string& name) const {
  std::vector<uint8_t> bytes = read(name);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace kiln
