#pragma once
// Zip format constants and little-endian helpers shared by the zip reader and writer (APPNOTE.TXT 6.3).

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace kiln::zip_format {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;

constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndSize = 22;
constexpr size_t kZip64EndSize = 56;
constexpr size_t kZip64LocatorSize = 20;

constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kPaddingExtraId = 0x4246;  // "FB", as torch's PyTorchStreamWriter writes it

constexpr uint16_t kFlagEncrypted = 0x0001;
constexpr uint16_t kFlagDataDescriptor = 0x0008;
constexpr uint16_t kFlagStrongEncryption = 0x0040;
constexpr uint16_t kFlagUtf8 = 0x0800;

constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;

constexpr uint32_t kMax32 = 0xffffffffu;
constexpr uint16_t kMax16 = 0xffffu;

inline uint16_t load16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
inline uint32_t load32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}
inline uint64_t load64(const uint8_t* p) { return load32(p) | static_cast<uint64_t>(load32(p + 4)) << 32; }

inline void put16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
inline void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, static_cast<uint16_t>(v));
  put16(out, static_cast<uint16_t>(v >> 16));
}
inline void put64(std::vector<uint8_t>& out, uint64_t v) {
  put32(out, static_cast<uint32_t>(v));
  put32(out, static_cast<uint32_t>(v >> 32));
}

/// zlib's CRC-32 over any number of bytes (zlib takes at most 4 GiB per call).
inline uint32_t crc32_of(const uint8_t* data, size_t size) {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  while (size > 0) {
    uInt chunk = static_cast<uInt>(size < (size_t{1} << 30) ? size : (size_t{1} << 30));
    crc = ::crc32(crc, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

/// The reason an entry name is unsafe or unusable (empty when it is fine): Kiln never extracts archives to
/// disk, but a name that would escape a directory is a sign of a hostile or broken archive.
inline const char* name_problem(std::string_view name) {
  if (name.empty()) return "empty entry name";
  if (name.size() > kMax16) return "entry name longer than 65535 bytes";
  if (name.find('\0') != std::string_view::npos) return "entry name contains a NUL byte";
  if (name.front() == '/' || name.front() == '\\') return "absolute entry name";
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find_first_of("/\\", start);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(start, end - start) == "..") return "entry name has a '..' component";
    start = end + 1;
  }
  return "";
}

}  // namespace kiln::zip_format
