#pragma once
// The engine cache (Torch-TensorRT's BaseEngineCache / DiskEngineCache): built engines kept by the hash of
// their segment (compiler/engine_hash.h), so that compiling the same architecture again loads a weightless
// plan and refits it instead of building.
//
// EngineCache is the interface a user can implement (a shared store, a database, ...): save and load opaque
// blobs by hash. DiskEngineCache keeps one file per hash in a directory:
//   <dir>/<hash>.kec = "KILNCACHE" | u32 version (2) | u32 hash length | hash | u64 blob size | blob | tag
// where tag = HMAC-SHA256 of all the bytes before it under the user's key (kiln/support/cache_dir.h). The
// directory must be private to the user (created 0700; one owned by another user or writable by group or
// others is not used: a warning, and the compile runs without the cache). Writes go to a temporary file
// renamed into place (atomic: a reader sees the old entry, the new one, or none), so processes of the same
// user may share a directory. A load refreshes the entry's modification time; a save evicts the least
// recently used entries while the directory holds more than the size budget. An entry that is truncated,
// corrupted, forged (its tag does not verify: edited, or written under another key), not a Kiln cache entry
// or not a regular file is a miss with a warning and is removed, never a crash or a hang.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::compiler {

class EngineCache {
 public:
  virtual ~EngineCache() = default;
  /// Stores `blob` under `hash` (replacing an entry of the same hash). Failures are logged, not thrown: a cache
  /// that cannot be written must not fail a compile.
  virtual void save(const std::string& hash, const std::vector<uint8_t>& blob) = 0;
  /// The blob stored under `hash`, or nullopt on a miss (absent, unreadable or invalid entries alike).
  virtual std::optional<std::vector<uint8_t>> load(const std::string& hash) = 0;
};

class DiskEngineCache : public EngineCache {
 public:
  /// A cache in `directory` (created 0700 when absent) holding at most `size_budget` bytes of entries,
  /// authenticated under `key` (empty: the user's key, user_cache_key()). When the directory is not private
  /// or the key cannot be had, a warning says why and the cache is not used (every load misses, saves do
  /// nothing).
  DiskEngineCache(std::string directory, int64_t size_budget, std::vector<uint8_t> key = {});

  void save(const std::string& hash, const std::vector<uint8_t>& blob) override;
  std::optional<std::vector<uint8_t>> load(const std::string& hash) override;

  const std::string& directory() const { return directory_; }
  int64_t size_budget() const { return size_budget_; }
  /// Bytes of the entries in the directory now.
  int64_t total_bytes() const;
  /// Hashes of the entries in the directory now, least recently used first.
  std::vector<std::string> hashes() const;
  /// The file an entry of `hash` lives in.
  std::string entry_path(const std::string& hash) const;
  /// Whether the cache is in use (its directory is private and the key was had).
  bool usable() const { return !key_.empty(); }

 private:
  void evict_beyond_budget(const std::string& keep);
  std::string directory_;
  int64_t size_budget_;
  std::vector<uint8_t> key_;
};

/// The default engine cache directory: <user cache dir>/engines, the user cache dir being $KILN_CACHE_DIR,
/// else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln (kiln/support/cache_dir.h). Throws kiln::Error(Io) when none
/// can be named.
std::string default_engine_cache_dir();

}  // namespace kiln::compiler
