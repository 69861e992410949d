#pragma once
// Test helpers: read a fixture archive's entries, edit them, and write a new archive in memory.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kiln/support/file.h"
#include "kiln/support/zip.h"

namespace kiln::frontend::testing {

inline std::string fixture_path(const std::string& name, const std::string& file = "model.pt2") {
  return std::string(KILN_TEST_DATA_DIR) + "/" + name + "/" + file;
}

/// Every entry of an archive, in archive order.
struct ArchiveEntries {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> entries;

  static ArchiveEntries read(const std::string& path) {
    ZipReader zip = ZipReader::open(path);
    ArchiveEntries out;
    for (const auto& e : zip.entries()) out.entries.emplace_back(e.name, zip.read(e.name));
    return out;
  }
  /// The entry whose name ends with `suffix` (the first one), or nullptr.
  std::vector<uint8_t>* find(const std::string& suffix) {
    for (auto& [name, data] : entries) {
      if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return &data;
      }
    }
    return nullptr;
  }
  std::string text(const std::string& suffix) {
    auto* d = find(suffix);
    return d ? std::string(d->begin(), d->end()) : std::string();
  }
  void set_text(const std::string& suffix, const std::string& text) {
    auto* d = find(suffix);
    if (d) *d = std::vector<uint8_t>(text.begin(), text.end());
  }
  std::vector<uint8_t> zip() const {
    ZipWriter w;
    for (const auto& [name, data] : entries) w.add(name, data);
    return w.finish();
  }
};

}  // namespace kiln::frontend::testing
