#pragma once
// Helpers of the support tests: fixture paths, deterministic bytes, tensor values, temporary directories, and
// a builder of hand-made zip archives (stored or raw-deflated entries, every field overridable) for malformed
// cases.

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kiln/support/error.h"
#include "kiln/support/host_tensor.h"

namespace kiln::test {

inline std::string support_data(const std::string& name) {
  return std::string(KILN_SUPPORT_TEST_DATA_DIR) + "/" + name;
}

/// The same bytes as scripts/make_support_test_data.py's lcg_bytes.
inline std::vector<uint8_t> lcg_bytes(size_t n, uint64_t seed = 12345) {
  std::vector<uint8_t> out(n);
  uint64_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = (x * 1103515245u + 12345u) % (uint64_t{1} << 31);
    out[i] = static_cast<uint8_t>((x >> 16) & 0xff);
  }
  return out;
}

inline std::vector<uint8_t> bytes_of(const std::string& text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

/// A tensor's elements as doubles.
inline std::vector<double> values(const HostTensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_as_double(i));
  return out;
}

/// A fresh directory under the system temporary directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln_support_test_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Raw deflate (no zlib header), as zip entries hold it.
inline std::vector<uint8_t> raw_deflate(const std::vector<uint8_t>& data, int level = 6) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  std::vector<uint8_t> out(deflateBound(&zs, data.size()) + 16);
  zs.next_in = const_cast<Bytef*>(data.data());
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  int ret = deflate(&zs, Z_FINISH);
  deflateEnd(&zs);
  if (ret != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  out.resize(zs.total_out);
  return out;
}

/// Raw deflate of `n` zero bytes, streamed (the zeros are never all in memory): decompression bombs for
/// tests.
inline std::vector<uint8_t> raw_deflate_zeros(uint64_t n) {
  z_stream zs{};
  if (deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  const std::vector<uint8_t> chunk(1 << 20, 0);
  std::vector<uint8_t> out;
  std::vector<uint8_t> buffer(1 << 16);
  uint64_t fed = 0;
  int ret = Z_OK;
  while (ret != Z_STREAM_END) {
    if (zs.avail_in == 0 && fed < n) {
      const uint64_t take = std::min<uint64_t>(chunk.size(), n - fed);
      zs.next_in = const_cast<Bytef*>(chunk.data());
      zs.avail_in = static_cast<uInt>(take);
      fed += take;
    }
    zs.next_out = buffer.data();
    zs.avail_out = static_cast<uInt>(buffer.size());
    ret = deflate(&zs, fed == n && zs.avail_in == 0 ? Z_FINISH : Z_NO_FLUSH);
    if (ret == Z_STREAM_ERROR) throw std::runtime_error("deflate failed");
    out.insert(out.end(), buffer.data(), buffer.data() + (buffer.size() - zs.avail_out));
  }
  deflateEnd(&zs);
  return out;
}

/// CRC-32 of `n` zero bytes.
inline uint32_t crc_of_zeros(uint64_t n) {
  const std::vector<uint8_t> chunk(1 << 20, 0);
  uLong crc = crc32(0, Z_NULL, 0);
  for (uint64_t done = 0; done < n;) {
    const uint64_t take = std::min<uint64_t>(chunk.size(), n - done);
    crc = crc32(crc, chunk.data(), static_cast<uInt>(take));
    done += take;
  }
  return static_cast<uint32_t>(crc);
}

inline uint32_t crc_of(const std::vector<uint8_t>& data) {
  return static_cast<uint32_t>(crc32(crc32(0, Z_NULL, 0), data.data(), static_cast<uInt>(data.size())));
}

/// One entry of a hand-made archive. The optional fields override what the builder would write.
struct RawEntry {
  std::string name;
  std::vector<uint8_t> data;  // uncompressed
  uint16_t method = 0;        // 0 stored, 8 deflate (the builder compresses), anything else: data as is
  uint16_t flags = 0;
  std::optional<std::string> local_name;
  std::optional<uint32_t> crc;
  std::optional<uint64_t> compressed_size;      // as declared in the central directory
  std::optional<uint64_t> uncompressed_size;    // as declared in the central directory
  std::optional<std::vector<uint8_t>> payload;  // the bytes written after the local header
  bool zip64 = false;                           // sizes and offset in a zip64 extra field
  bool data_descriptor = false;                 // zero sizes in the local header, a descriptor after the data
};

struct RawArchiveOptions {
  bool zip64_end = false;
  std::optional<uint64_t> entry_count;
  std::optional<uint64_t> cd_offset;
  std::optional<uint64_t> cd_size;
  std::string comment;
  std::vector<uint8_t> prefix;  // bytes before the first local header
};

inline void put16(std::vector<uint8_t>& o, uint64_t v) {
  o.push_back(static_cast<uint8_t>(v));
  o.push_back(static_cast<uint8_t>(v >> 8));
}
inline void put32(std::vector<uint8_t>& o, uint64_t v) {
  put16(o, v & 0xffff);
  put16(o, (v >> 16) & 0xffff);
}
inline void put64(std::vector<uint8_t>& o, uint64_t v) {
  put32(o, v & 0xffffffffu);
  put32(o, v >> 32);
}

/// Writes the archive the entries describe, independently of kiln::ZipWriter.
inline std::vector<uint8_t> build_zip(const std::vector<RawEntry>& entries,
                                      const RawArchiveOptions& options = {}) {
  std::vector<uint8_t> out = options.prefix;
  struct Info {
    uint64_t offset, csize, usize;
    uint32_t crc;
  };
  std::vector<Info> infos;
  for (const RawEntry& e : entries) {
    std::vector<uint8_t> payload = e.payload ? *e.payload : (e.method == 8 ? raw_deflate(e.data) : e.data);
    Info info{out.size(), e.compressed_size.value_or(payload.size()),
              e.uncompressed_size.value_or(e.data.size()), e.crc.value_or(crc_of(e.data))};
    infos.push_back(info);
    std::string local_name = e.local_name.value_or(e.name);
    uint16_t flags = e.flags | (e.data_descriptor ? 8 : 0);
    put32(out, 0x04034b50);
    put16(out, e.zip64 ? 45 : 20);
    put16(out, flags);
    put16(out, e.method);
    put16(out, 0);
    put16(out, 0x21);
    put32(out, e.data_descriptor ? 0 : info.crc);
    put32(out, e.data_descriptor ? 0 : e.zip64 ? 0xffffffffu : info.csize);
    put32(out, e.data_descriptor ? 0 : e.zip64 ? 0xffffffffu : info.usize);
    put16(out, local_name.size());
    put16(out, e.zip64 ? 20 : 0);
    out.insert(out.end(), local_name.begin(), local_name.end());
    if (e.zip64) {
      put16(out, 1);
      put16(out, 16);
      put64(out, info.usize);
      put64(out, info.csize);
    }
    out.insert(out.end(), payload.begin(), payload.end());
    if (e.data_descriptor) {
      put32(out, 0x08074b50);
      put32(out, info.crc);
      put32(out, info.csize);
      put32(out, info.usize);
    }
  }
  uint64_t cd_offset = out.size();
  for (size_t i = 0; i < entries.size(); ++i) {
    const RawEntry& e = entries[i];
    const Info& info = infos[i];
    put32(out, 0x02014b50);
    put16(out, 0x031e);
    put16(out, e.zip64 ? 45 : 20);
    put16(out, e.flags | (e.data_descriptor ? 8 : 0));
    put16(out, e.method);
    put16(out, 0);
    put16(out, 0x21);
    put32(out, info.crc);
    put32(out, e.zip64 ? 0xffffffffu : info.csize);
    put32(out, e.zip64 ? 0xffffffffu : info.usize);
    put16(out, e.name.size());
    put16(out, e.zip64 ? 28 : 0);
    put16(out, 0);
    put16(out, 0);
    put16(out, 0);
    put32(out, 0);
    put32(out, e.zip64 ? 0xffffffffu : info.offset);
    out.insert(out.end(), e.name.begin(), e.name.end());
    if (e.zip64) {
      put16(out, 1);
      put16(out, 24);
      put64(out, info.usize);
      put64(out, info.csize);
      put64(out, info.offset);
    }
  }
  uint64_t cd_size = options.cd_size.value_or(out.size() - cd_offset);
  uint64_t count = options.entry_count.value_or(entries.size());
  uint64_t cd_at = options.cd_offset.value_or(cd_offset);
  if (options.zip64_end) {
    uint64_t record = out.size();
    put32(out, 0x06064b50);
    put64(out, 44);
    put16(out, 45);
    put16(out, 45);
    put32(out, 0);
    put32(out, 0);
    put64(out, count);
    put64(out, count);
    put64(out, cd_size);
    put64(out, cd_at);
    put32(out, 0x07064b50);
    put32(out, 0);
    put64(out, record);
    put32(out, 1);
  }
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, options.zip64_end ? 0xffff : count);
  put16(out, options.zip64_end ? 0xffff : count);
  put32(out, options.zip64_end ? 0xffffffffu : cd_size);
  put32(out, options.zip64_end ? 0xffffffffu : cd_at);
  put16(out, options.comment.size());
  out.insert(out.end(), options.comment.begin(), options.comment.end());
  return out;
}

/// Runs `fn`, expecting a kiln::Error of `kind` whose what() contains every one of `parts`.
template <typename Fn>
void expect_error(Fn&& fn, ErrorKind kind, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected a kiln::Error containing '" << *parts.begin() << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace kiln::test
