// ZipWriter: stored entries, data 64-byte aligned, zip64 structures where a size, offset or count needs them.
#include <string>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/zip.h"
#include "zip_format.h"

namespace kiln {

using namespace zip_format;

namespace {

constexpr uint16_t kVersion20 = 20;       // stored entries, no zip64
constexpr uint16_t kVersionZip64 = 45;    // zip64 extensions
constexpr uint16_t kMadeByUnix = 3 << 8;  // so that unzip gives extracted files the permissions below
constexpr uint32_t kRegularFileMode = 0100644u;
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01: fixed, for deterministic output

bool has_non_ascii(const std::string& name) {
  for (char c : name) {
    if (static_cast<unsigned char>(c) >= 0x80) return true;
  }
  return false;
}

}  // namespace

void ZipWriter::add(const std::string& name, std::vector<uint8_t>&& data) {
  const char* problem = name_problem(name);
  KILN_CHECK(*problem == '\0', InvalidInput, "zip writer: entry '", name, "': ", problem);
  KILN_CHECK(names_.insert(name).second, InvalidInput, "zip writer: entry '", name,
             "': duplicate entry name");
  entries_.emplace_back(name, std::move(data));
}

void ZipWriter::add(const std::string& name, const std::vector<uint8_t>& data) {
  add(name, std::vector<uint8_t>(data));
}

void ZipWriter::add(const std::string& name, const std::string& text) {
  add(name, std::vector<uint8_t>(text.begin(), text.end()));
}

std::vector<uint8_t> ZipWriter::finish() const {
  struct Placed {
    uint64_t offset;
    uint32_t crc;
  };
  std::vector<Placed> placed;
  placed.reserve(entries_.size());

  uint64_t total = 0;
  for (const auto& [name, data] : entries_) {
    total += kLocalHeaderSize + kCentralHeaderSize + 2 * name.size() + 160 + data.size();
  }
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(total + 200));

  for (const auto& [name, data] : entries_) {
    uint64_t offset = out.size();
    uint64_t size = data.size();
    uint32_t crc = crc32_of(data.data(), data.size());
    placed.push_back({offset, crc});

    bool zip64 = force_zip64_ || size >= kMax32;
    uint64_t zip64_extra = zip64 ? 4 + 16 : 0;
    // Pad with an extra field so that the data starts on an alignment boundary; a padding block needs at
    // least its 4-byte header.
    uint64_t unpadded = offset + kLocalHeaderSize + name.size() + zip64_extra;
    uint64_t pad = (kAlignment - unpadded % kAlignment) % kAlignment;
    if (pad != 0 && pad < 4) pad += kAlignment;
    uint16_t flags = has_non_ascii(name) ? kFlagUtf8 : 0;

    put32(out, kLocalHeaderSignature);
    put16(out, zip64 ? kVersionZip64 : kVersion20);
    put16(out, flags);
    put16(out, kMethodStored);
    put16(out, 0);  // time
    put16(out, kDosDate1980);
    put32(out, crc);
    put32(out, zip64 ? kMax32 : static_cast<uint32_t>(size));
    put32(out, zip64 ? kMax32 : static_cast<uint32_t>(size));
    put16(out, static_cast<uint16_t>(name.size()));
    put16(out, static_cast<uint16_t>(zip64_extra + pad));
    out.insert(out.end(), name.begin(), name.end());
    if (zip64) {
      put16(out, kZip64ExtraId);
      put16(out, 16);
      put64(out, size);
      put64(out, size);
    }
    if (pad != 0) {
      put16(out, kPaddingExtraId);
      put16(out, static_cast<uint16_t>(pad - 4));
      out.insert(out.end(), pad - 4, 'Z');
    }
    KILN_CHECK(out.size() % kAlignment == 0, Internal, "zip writer misaligned entry '", name, "'");
    out.insert(out.end(), data.begin(), data.end());
  }

  uint64_t cd_offset = out.size();
  for (size_t i = 0; i < entries_.size(); ++i) {
    const auto& [name, data] = entries_[i];
    uint64_t size = data.size();
    uint64_t offset = placed[i].offset;
    bool size64 = force_zip64_ || size >= kMax32;
    bool offset64 = force_zip64_ || offset >= kMax32;
    uint16_t extra_len = static_cast<uint16_t>(size64 || offset64 ? 4 + 16 * size64 + 8 * offset64 : 0);
    uint16_t version = size64 || offset64 ? kVersionZip64 : kVersion20;

    put32(out, kCentralHeaderSignature);
    put16(out, kMadeByUnix | version);
    put16(out, version);
    put16(out, has_non_ascii(name) ? kFlagUtf8 : 0);
    put16(out, kMethodStored);
    put16(out, 0);
    put16(out, kDosDate1980);
    put32(out, placed[i].crc);
    put32(out, size64 ? kMax32 : static_cast<uint32_t>(size));
    put32(out, size64 ? kMax32 : static_cast<uint32_t>(size));
    put16(out, static_cast<uint16_t>(name.size()));
    put16(out, extra_len);
    put16(out, 0);  // comment
    put16(out, 0);  // disk
    put16(out, 0);  // internal attributes
    put32(out, kRegularFileMode << 16);
    put32(out, offset64 ? kMax32 : static_cast<uint32_t>(offset));
    out.insert(out.end(), name.begin(), name.end());
    if (extra_len != 0) {
      put16(out, kZip64ExtraId);
      put16(out, static_cast<uint16_t>(extra_len - 4));
      if (size64) {
        put64(out, size);
        put64(out, size);
      }
      if (offset64) put64(out, offset);
    }
  }
  uint64_t cd_size = out.size() - cd_offset;
  uint64_t count = entries_.size();

  bool zip64_end = force_zip64_ || count >= kMax16 || cd_size >= kMax32 || cd_offset >= kMax32;
  if (zip64_end) {
    uint64_t record_offset = out.size();
    put32(out, kZip64EndSignature);
    put64(out, kZip64EndSize - 12);  // the record's size, not counting its first 12 bytes
    put16(out, kMadeByUnix | kVersionZip64);
    put16(out, kVersionZip64);
    put32(out, 0);  // this disk
    put32(out, 0);  // the disk where the central directory starts
    put64(out, count);
    put64(out, count);
    put64(out, cd_size);
    put64(out, cd_offset);
    put32(out, kZip64LocatorSignature);
    put32(out, 0);
    put64(out, record_offset);
    put32(out, 1);  // disks in all
  }
  uint16_t count16 = zip64_end && count >= kMax16 ? kMax16 : static_cast<uint16_t>(count);
  put32(out, kEndSignature);
  put16(out, 0);
  put16(out, 0);
  put16(out, count16);
  put16(out, count16);
  put32(out, zip64_end && cd_size >= kMax32 ? kMax32 : static_cast<uint32_t>(cd_size));
  put32(out, zip64_end && cd_offset >= kMax32 ? kMax32 : static_cast<uint32_t>(cd_offset));
  put16(out, 0);  // comment
  return out;
}

void ZipWriter::write_file(const std::string& path) const { write_file_atomic(path, finish()); }

}  // namespace kiln
