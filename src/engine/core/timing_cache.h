#pragma once
// TimingCache: the builder's timing-cache file in memory (read when the build starts, written once after it);
// the entries' content is in include/kiln/engine/timing_cache.h.

#include <map>
#include <string>

#include "kiln/engine/timing_cache.h"

namespace kiln::engine {

/// "key<TAB>entry" lines of the file at `path` (nothing when `path` is empty or the file does not exist).
class TimingCache {
 public:
  explicit TimingCache(std::string path);
  /// The stored text of `key`, or null.
  const std::string* find(const std::string& key) const;
  void put(const std::string& key, const std::string& text);
  /// Writes the file when an entry changed (atomically; a failure is a warning: it only costs timing again).
  void save() const;
  const std::map<std::string, std::string>& entries() const { return entries_; }

 private:
  std::string path_;
  std::map<std::string, std::string> entries_;
  bool dirty_ = false;
};

}  // namespace kiln::engine
