#include "engine/core/timing_cache.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>

#include "kiln/support/cache_dir.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/file_lock.h"
#include "kiln/support/hash.h"
#include "kiln/support/logging.h"

namespace kiln::engine {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHeader = "kiln-timing-cache 2\n";
constexpr std::string_view kTagPrefix = "hmac-sha256\t";

std::string file_text(const std::map<std::string, std::string>& entries, const std::vector<uint8_t>& key) {
  std::string text(kHeader);
  for (const auto& [k, v] : entries) text += k + '\t' + v + '\n';
  return text + std::string(kTagPrefix) + to_hex(hmac_sha256(key, text)) + '\n';
}

// The entries of a cache file's text, or nullopt with `why` when it is not a cache authenticated by `key`.
std::optional<std::map<std::string, std::string>> parse_file(const std::string& text,
                                                             const std::vector<uint8_t>& key,
                                                             std::string& why) {
  if (text.compare(0, kHeader.size(), kHeader) != 0) {
    why = "not a timing cache of this version (it is timed again)";
    return std::nullopt;
  }
  const size_t tag_line = text.back() == '\n' ? text.rfind('\n', text.size() - 2) : std::string::npos;
  if (tag_line == std::string::npos || tag_line + 1 < kHeader.size() ||
      text.compare(tag_line + 1, kTagPrefix.size(), kTagPrefix) != 0) {
    why = "no authentication tag (truncated?)";
    return std::nullopt;
  }
  const std::string_view body(text.data(), tag_line + 1);
  const std::string tag =
      text.substr(tag_line + 1 + kTagPrefix.size(), text.size() - tag_line - 2 - kTagPrefix.size());
  const std::string expected = to_hex(hmac_sha256(key, body));
  if (tag.size() != expected.size() ||
      !constant_time_equal(reinterpret_cast<const uint8_t*>(tag.data()),
                           reinterpret_cast<const uint8_t*>(expected.data()), expected.size())) {
    why = "authentication failed (edited, forged, or written under another user's key)";
    return std::nullopt;
  }
  std::map<std::string, std::string> entries;
  for (size_t at = kHeader.size(); at < body.size();) {
    const size_t end = body.find('\n', at);
    const std::string_view line = body.substr(at, end - at);
    at = end + 1;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || tab + 1 >= line.size()) continue;
    entries[std::string(line.substr(0, tab))] = std::string(line.substr(tab + 1));
  }
  return entries;
}

}  // namespace

TimingCache::TimingCache(std::string path, std::vector<uint8_t> key) : path_(std::move(path)) {
  if (path_.empty()) return;
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    KILN_FAIL(Io, "timing cache '", path_, "' is ", file_kind(st.st_mode),
              ", not a regular file (name a regular file, or none with an empty path)");
  }
  try {
    key_ = key.empty() ? user_cache_key() : std::move(key);
  } catch (const Error& e) {
    KILN_WARN("engine: timing cache '", path_, "' not used: ", e.message());
    return;
  }
  entries_ = read_file();
  KILN_DEBUG("engine: timing cache '", path_, "': ", entries_.size(), " entries");
}

std::map<std::string, std::string> TimingCache::read_file() const {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path_, ec))) return {};
  std::string why;
  std::optional<std::map<std::string, std::string>> entries;
  try {
    entries = parse_file(read_file_text(path_), key_, why);
  } catch (const Error& e) {
    why = e.message();
  }
  if (!entries) {
    KILN_WARN("engine: ignoring timing cache '", path_, "': ", why);
    return {};
  }
  return std::move(*entries);
}

const std::string* TimingCache::find(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void TimingCache::put(const std::string& key, const std::string& text) {
  entries_[key] = text;
  added_[key] = text;
}

void TimingCache::save() {
  if (!usable() || added_.empty()) return;
  // The cache's folder is made on first use. Under the lock the file is read again, so that entries another
  // build saved since this one started are kept; the write is atomic so that readers without the lock never
  // see half a file. A cache that cannot be written only costs timing again.
  try {
    const fs::path parent = fs::path(path_).parent_path();
    if (!parent.empty()) fs::create_directories(parent);
    FileLock lock(path_ + ".lock");
    std::map<std::string, std::string> merged = read_file();
    for (const auto& [k, v] : added_) merged[k] = v;
    const std::string text = file_text(merged, key_);
    write_file_atomic(path_, text.data(), text.size());
    entries_ = std::move(merged);
    added_.clear();
  } catch (const std::exception& e) {
    KILN_WARN("engine: cannot write timing cache '", path_, "': ", e.what());
  }
}

std::string format_timing_entry(const TimingEntry& e) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), " margin=%.4f spread=%.4f cpu=%.3f agree=%d at=%lld", e.margin, e.spread,
                e.cpu_share, e.agreements, static_cast<long long>(e.timed_at));
  std::string flags;
  for (auto [on, name] :
       {std::pair{e.close, "close"}, {e.loaded, "loaded"}, {e.noisy, "noisy"}, {e.cut_short, "short"}}) {
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
          e.cut_short = e.cut_short || f == "short";
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
  if (e.loaded || e.noisy || e.cut_short || e.agreements < 1) return false;
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
