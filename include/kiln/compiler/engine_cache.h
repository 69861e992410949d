#pragma once
// The engine cache (Torch-TensorRT's BaseEngineCache / DiskEngineCache): built engines kept by the hash of their
// segment (compiler/engine_hash.h), so that compiling the same architecture again loads a weightless plan and
// refits it instead of building.
//
// EngineCache is the interface a user can implement (a shared store, a database, ...): save and load opaque blobs
// by hash. DiskEngineCache keeps one file per hash in a directory:
//   <dir>/<hash>.kec = "KILNCACHE" | u32 version | u32 hash length | hash | u64 blob size | blob | SHA-256(blob)
// Writes go to a temporary file renamed into place (atomic: a reader sees the old entry, the new one, or none),
// so two processes may share a directory. A load refreshes the entry's modification time; a save evicts the least
// recently used entries while the directory holds more than the size budget. An entry that is truncated, corrupted
// or not a Kiln cache entry is a miss with a warning (and is removed), never a crash.

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
  /// A cache in `directory` (created when first written) holding at most `size_budget` bytes of entries.
  DiskEngineCache(std::string directory, int64_t size_budget);

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

 private:
  void evict_beyond_budget(const std::string& keep);
  std::string directory_;
  int64_t size_budget_;
};

/// The default engine cache directory: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln/engines, else
/// $HOME/.cache/kiln/engines, else /tmp/kiln_engine_cache.
std::string default_engine_cache_dir();

}  // namespace kiln::compiler
