#pragma once
// TimingCache: the builder's timing-cache file in memory (read when the build starts, merged into the file
// once after it); the entries' content is in include/kiln/engine/timing_cache.h.
//
// File: a line "kiln-timing-cache 2", then "key<TAB>entry" lines (sorted by key), then "hmac-sha256<TAB><64
// hex>": the HMAC-SHA256 of every byte before that last line under the user's key (kiln/support/cache_dir.h).
// A file that does not verify (edited, forged, another user's, the unauthenticated format before it) is
// ignored with a warning: its entries are timed again and the next save replaces it. A path that exists but
// is not a regular file (FIFO, device, directory, symbolic link) is an error (Io), never read: a FIFO would
// block the build, /dev/zero would be read until memory ran out. save() merges under an flock on
// "<path>.lock": the file is read again, this build's entries are added and it is written atomically, so
// concurrent builds sharing a cache keep each other's entries.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/engine/timing_cache.h"

namespace kiln::engine {

class TimingCache {
 public:
  /// The cache at `path` ("": none), authenticated under `key` (empty: the user's key, user_cache_key(); when
  /// there is none the build runs without the cache, with a warning). Throws kiln::Error(Io) when `path`
  /// exists and is not a regular file.
  explicit TimingCache(std::string path, std::vector<uint8_t> key = {});
  /// The stored text of `key`, or null.
  const std::string* find(const std::string& key) const;
  void put(const std::string& key, const std::string& text);
  /// Merges the entries put() since construction into the file (see above). A failure is a warning: a cache
  /// that cannot be written only costs timing again.
  void save();
  const std::map<std::string, std::string>& entries() const { return entries_; }
  /// Whether the file is used (a path and a key).
  bool usable() const { return !key_.empty(); }

 private:
  std::map<std::string, std::string> read_file() const;

  std::string path_;
  std::vector<uint8_t> key_;
  std::map<std::string, std::string> entries_;
  std::map<std::string, std::string> added_;
};

}  // namespace kiln::engine
