#pragma once
// The timing cache's entries: which tactic a layer's timing chose, with the figures that say how far to trust
// it (its margin, the spread of the runs, the share of the wall time the timing thread got a core). A builder
// reuses an entry only when it is trusted (timing_entry_trusted); the others are timed again and replaced.
// The file holds one "key<TAB>entry" line per layer signature (the key hashes the device and the layer, see
// docs/engine.md), authenticated under the user's key (src/engine/core/timing_cache.h has the format).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::engine {

/// One timing-cache entry.
struct TimingEntry {
  std::string tactic;
  /// How much faster the chosen tactic measured than the best other one, as a fraction of its time (negative
  /// when the preference order chose it within noise although another measured faster).
  double margin = 0.0;
  double spread = 0.0;     // run-to-run spread of the contest (see tactic_choice.h)
  double cpu_share = 1.0;  // CPU time / wall time of the timing thread during the timed rounds
  bool close = false;      // decided within noise by the preference order
  bool loaded = false;     // the machine was loaded while timing
  bool noisy = false;      // the runs' spread was above the noise threshold
  bool cut_short = false;  // the build's timing budget cut the contest short (flag "short")
  /// Consecutive timings that chose this tactic with figures that were not uncertain.
  int agreements = 0;
  int64_t timed_at = 0;  // seconds since the epoch of the last timing
};

/// The entry as the text the file stores after the key: "TACTIC margin=.. spread=.. cpu=.. agree=N at=T
/// [flags=..]".
std::string format_timing_entry(const TimingEntry& entry);
/// Parses format_timing_entry's text; nullopt when it is not one (an entry of an older format, a damaged
/// line).
std::optional<TimingEntry> parse_timing_entry(const std::string& text);

/// Whether a builder may reuse `entry` without timing again: its figures were neither loaded nor noisy nor
/// cut short, and a close contest was decided the same way by two such timings in a row.
bool timing_entry_trusted(const TimingEntry& entry);

/// One line of a timing-cache file.
struct TimingCacheRecord {
  std::string key;
  std::optional<TimingEntry> entry;  // nullopt: a line this version does not read (it is timed again)
  std::string text;                  // the entry as stored
};

/// The records of the timing-cache file at `path` (none when it does not exist or does not verify, with a
/// warning). Throws kiln::Error(Io) when `path` is not a regular file.
std::vector<TimingCacheRecord> read_timing_cache(const std::string& path);

}  // namespace kiln::engine
