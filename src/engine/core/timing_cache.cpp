#include "engine/core/timing_cache.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/support/file.h"
#include "kiln/support/logging.h"

namespace kiln::engine {

TimingCache::TimingCache(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    auto tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || tab + 1 >= line.size()) continue;
    entries_[line.substr(0, tab)] = line.substr(tab + 1);
  }
  KILN_DEBUG("engine: timing cache '", path_, "': ", entries_.size(), " entries");
}

const std::string* TimingCache::find(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void TimingCache::put(const std::string& key, const std::string& text) {
  entries_[key] = text;
  dirty_ = true;
}

void TimingCache::save() const {
  if (path_.empty() || !dirty_) return;
  std::string text;
  for (const auto& [k, v] : entries_) text += k + '\t' + v + '\n';
  // The cache's folder is made on first use; the write is atomic so that concurrent builds never read half a
  // file. A cache that cannot be written only costs re-timing next time.
  try {
    std::filesystem::path parent = std::filesystem::path(path_).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    write_file_atomic(path_, text.data(), text.size());
  } catch (const std::exception& e) {
    KILN_WARN("engine: cannot write timing cache '", path_, "': ", e.what());
  }
}

std::string format_timing_entry(const TimingEntry& e) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), " margin=%.4f spread=%.4f cpu=%.3f agree=%d at=%lld", e.margin, e.spread,
                e.cpu_share, e.agreements, static_cast<long long>(e.timed_at));
  std::string flags;
  for (auto [on, name] : {std::pair{e.close, "close"}, {e.loaded, "loaded"}, {e.noisy, "noisy"}}) {
    if (on) flags += (flags.empty() ? " flags=" : ",") + std::string(name);
  }
  return e.tactic + buf + flags;
}

std::optional<TimingEntry> parse_timing_entry(const std::string& text) {
  std::istringstream in(text);
  TimingEntry e;
  if (!(in >> e.tactic) || e.tactic.find('=') != std::string::npos) return std::nullopt;
  bool margin = false, spread = false, cpu = false, agree = false;
  std::string field;
  while (in >> field) {
    const auto eq = field.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::string name = field.substr(0, eq), value = field.substr(eq + 1);
    try {
      if (name == "margin") {
        e.margin = std::stod(value), margin = true;
      } else if (name == "spread") {
        e.spread = std::stod(value), spread = true;
      } else if (name == "cpu") {
        e.cpu_share = std::stod(value), cpu = true;
      } else if (name == "agree") {
        e.agreements = std::stoi(value), agree = true;
      } else if (name == "at") {
        e.timed_at = std::stoll(value);
      } else if (name == "flags") {
        std::istringstream flags(value);
        std::string f;
        while (std::getline(flags, f, ',')) {
          e.close = e.close || f == "close";
          e.loaded = e.loaded || f == "loaded";
          e.noisy = e.noisy || f == "noisy";
        }
      }  // fields of a later version are ignored
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  if (!margin || !spread || !cpu || !agree) return std::nullopt;
  return e;
}

bool timing_entry_trusted(const TimingEntry& e) {
  if (e.loaded || e.noisy || e.agreements < 1) return false;
  return !e.close || e.agreements >= 2;
}

std::vector<TimingCacheRecord> read_timing_cache(const std::string& path) {
  std::vector<TimingCacheRecord> out;
  if (path.empty()) return out;
  TimingCache cache(path);
  for (const auto& [key, text] : cache.entries()) out.push_back({key, parse_timing_entry(text), text});
  return out;
}

}  // namespace kiln::engine
