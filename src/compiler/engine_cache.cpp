#include "kiln/compiler/engine_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "kiln/support/cache_dir.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/hash.h"
#include "kiln/support/logging.h"

namespace kiln::compiler {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[] = "KILNCACHE";
constexpr size_t kMagicSize = sizeof(kMagic) - 1;
// 2: the entry ends with an HMAC-SHA256 of everything before it under the user's key (1: a plain SHA-256 of
// the blob, which anyone could recompute after editing the entry).
constexpr uint32_t kEntryVersion = 2;
constexpr size_t kTagSize = 32;
constexpr const char* kSuffix = ".kec";

void check_hash(const std::string& hash) {
  const bool hex = std::all_of(hash.begin(), hash.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
  KILN_CHECK(hex && hash.size() >= 16 && hash.size() <= 128, InvalidInput, "engine cache: '", hash,
             "' is not a hash (16 to 128 lowercase hex digits)");
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Bounds-checked reading of an entry file.
struct EntryReader {
  const std::vector<uint8_t>& bytes;
  size_t at = 0;
  bool take(size_t n) {
    if (n > bytes.size() - at) return false;
    at += n;
    return true;
  }
  bool u32(uint32_t& v) {
    if (!take(4)) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(bytes[at - 4 + i]) << (8 * i);
    return true;
  }
  bool u64(uint64_t& v) {
    if (!take(8)) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(bytes[at - 8 + i]) << (8 * i);
    return true;
  }
};

// The blob of an entry file, or an explanation of why the file is not a valid entry for `hash` under `key`.
std::optional<std::vector<uint8_t>> parse_entry(const std::vector<uint8_t>& bytes, const std::string& hash,
                                                const std::vector<uint8_t>& key, std::string& why) {
  EntryReader r{bytes};
  if (!r.take(kMagicSize) || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    why = "not a Kiln engine cache entry";
    return std::nullopt;
  }
  uint32_t version = 0, hash_size = 0;
  uint64_t blob_size = 0;
  if (!r.u32(version) || version != kEntryVersion) {
    why = "entry format version " + std::to_string(version) + " is not " + std::to_string(kEntryVersion);
    return std::nullopt;
  }
  const size_t hash_at = r.at + 4;
  if (!r.u32(hash_size) || !r.take(hash_size) ||
      std::string(reinterpret_cast<const char*>(bytes.data() + hash_at), hash_size) != hash) {
    why = "the entry is stored under another hash";
    return std::nullopt;
  }
  if (!r.u64(blob_size) || blob_size > bytes.size() - r.at || bytes.size() - r.at - blob_size != kTagSize) {
    why = "truncated or oversized entry";
    return std::nullopt;
  }
  const size_t signed_size = bytes.size() - kTagSize;
  const std::vector<uint8_t> tag = hmac_sha256(key, bytes.data(), signed_size);
  if (!constant_time_equal(tag.data(), bytes.data() + signed_size, kTagSize)) {
    why = "authentication failed (corrupted, forged, or written under another user's key)";
    return std::nullopt;
  }
  const uint8_t* blob = bytes.data() + r.at;
  return std::vector<uint8_t>(blob, blob + blob_size);
}

struct EntryFile {
  std::string hash;
  fs::path path;
  int64_t bytes = 0;
  fs::file_time_type used;
};

// Entries of the directory, least recently used first (temporary files of writers in progress are skipped).
std::vector<EntryFile> list_entries(const std::string& directory) {
  std::vector<EntryFile> out;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (p.extension() != kSuffix || name.find(".tmp.") != std::string::npos) continue;
    std::error_code e1, e2;
    EntryFile f{p.stem().string(), p, static_cast<int64_t>(fs::file_size(p, e1)), fs::last_write_time(p, e2)};
    if (!e1 && !e2) out.push_back(std::move(f));  // removed meanwhile by another process: skip
  }
  std::sort(out.begin(), out.end(), [](const EntryFile& a, const EntryFile& b) {
    return a.used != b.used ? a.used < b.used : a.hash < b.hash;
  });
  return out;
}

}  // namespace

DiskEngineCache::DiskEngineCache(std::string directory, int64_t size_budget, std::vector<uint8_t> key)
    : directory_(std::move(directory)), size_budget_(size_budget), key_(std::move(key)) {
  KILN_CHECK(!directory_.empty(), InvalidInput, "engine cache: the directory is empty");
  KILN_CHECK(size_budget_ > 0, InvalidInput, "engine cache: size budget must be positive, got ", size_budget_);
  // A cache that cannot be trusted is not used: the compile goes on without it.
  try {
    ensure_private_dir(directory_);
    if (key_.empty()) key_ = user_cache_key();
  } catch (const Error& e) {
    KILN_WARN("engine cache: not used: ", e.message());
    key_.clear();
  }
}

std::string DiskEngineCache::entry_path(const std::string& hash) const {
  check_hash(hash);
  return (fs::path(directory_) / (hash + kSuffix)).string();
}

void DiskEngineCache::save(const std::string& hash, const std::vector<uint8_t>& blob) {
  const std::string path = entry_path(hash);
  if (!usable()) return;
  std::vector<uint8_t> entry(kMagic, kMagic + kMagicSize);
  put_u32(entry, kEntryVersion);
  put_u32(entry, static_cast<uint32_t>(hash.size()));
  entry.insert(entry.end(), hash.begin(), hash.end());
  put_u64(entry, blob.size());
  entry.insert(entry.end(), blob.begin(), blob.end());
  const std::vector<uint8_t> tag = hmac_sha256(key_, entry.data(), entry.size());
  entry.insert(entry.end(), tag.begin(), tag.end());
  if (static_cast<int64_t>(entry.size()) > size_budget_) {
    KILN_WARN("engine cache: entry ", hash.substr(0, 12), " (", entry.size(), " bytes) exceeds the cache budget of ",
              size_budget_, " bytes; not cached");
    return;
  }
  try {
    write_file_atomic(path, entry);
  } catch (const Error& e) {
    KILN_WARN("engine cache: cannot save entry ", hash.substr(0, 12), ": ", e.what());
    return;
  }
  evict_beyond_budget(hash);
}

std::optional<std::vector<uint8_t>> DiskEngineCache::load(const std::string& hash) {
  const std::string path = entry_path(hash);
  std::error_code ec;
  if (!usable() || !fs::exists(fs::symlink_status(path, ec))) return std::nullopt;
  std::vector<uint8_t> bytes;
  try {
    bytes = read_file_bytes(path);
  } catch (const Error& e) {
    // Not readable as an entry (a FIFO, a device, a directory...): a miss, and it goes.
    KILN_WARN("engine cache: ignoring entry '", path, "': ", e.message());
    fs::remove(path, ec);
    return std::nullopt;
  }
  std::string why;
  std::optional<std::vector<uint8_t>> blob = parse_entry(bytes, hash, key_, why);
  if (!blob) {
    KILN_WARN("engine cache: ignoring entry '", path, "': ", why);
    fs::remove(path, ec);
    return std::nullopt;
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // least recently *used* order
  return blob;
}

int64_t DiskEngineCache::total_bytes() const {
  int64_t total = 0;
  for (const EntryFile& f : list_entries(directory_)) total += f.bytes;
  return total;
}

std::vector<std::string> DiskEngineCache::hashes() const {
  std::vector<std::string> out;
  for (const EntryFile& f : list_entries(directory_)) out.push_back(f.hash);
  return out;
}

void DiskEngineCache::evict_beyond_budget(const std::string& keep) {
  std::vector<EntryFile> entries = list_entries(directory_);
  int64_t total = 0;
  for (const EntryFile& f : entries) total += f.bytes;
  for (const EntryFile& f : entries) {
    if (total <= size_budget_) break;
    if (f.hash == keep) continue;
    std::error_code ec;
    if (fs::remove(f.path, ec) || !fs::exists(f.path)) {
      total -= f.bytes;
      KILN_INFO("engine cache: evicted ", f.hash.substr(0, 12), " (", f.bytes, " bytes)");
    }
  }
}

std::string default_engine_cache_dir() {
  const std::string root = user_cache_dir();
  KILN_CHECK(!root.empty(), Io,
             "no cache directory for the engine cache: set KILN_CACHE_DIR, XDG_CACHE_HOME or HOME, or pass "
             "--cache-dir");
  return (fs::path(root) / "engines").string();
}

}  // namespace kiln::compiler
