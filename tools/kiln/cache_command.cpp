// kiln cache list [--cache-dir DIR] [--timing-cache FILE]
// kiln cache clear [--engines | --timing] [--cache-dir DIR] [--timing-cache FILE]
//
// Shows and clears the engine cache (weightless engines by segment hash, compiler/engine_cache.h) and the
// timing cache (the tactic each layer signature was given, with the figures that say how far to trust it,
// engine/timing_cache.h). Defaults are the locations `kiln compile` uses.

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <limits>

#include "commands.h"
#include "kiln/compiler/compilation_settings.h"
#include "kiln/compiler/engine_cache.h"
#include "kiln/engine/timing_cache.h"
#include "kiln/support/error.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

struct CacheOptions {
  std::string cache_dir;
  std::string timing_cache = compiler::default_timing_cache_path();
  bool engines_only = false;
  bool timing_only = false;
};

std::string engine_dir(const CacheOptions& o) {
  return o.cache_dir.empty() ? compiler::default_engine_cache_dir() : o.cache_dir;
}

std::string when(int64_t seconds) {
  if (seconds <= 0) return "?";
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &tm);
  return buf;
}

int list_caches(const CacheOptions& o) {
  compiler::DiskEngineCache engines(engine_dir(o), std::numeric_limits<int64_t>::max());
  const std::vector<std::string> hashes = engines.hashes();
  std::cout << "engine cache " << engines.directory() << ": " << hashes.size() << " engines, "
            << engines.total_bytes() << " bytes\n";
  for (const std::string& h : hashes) {  // least recently used first
    std::error_code ec;
    const auto bytes = fs::file_size(engines.entry_path(h), ec);
    std::cout << "  " << h.substr(0, 16) << "  " << (ec ? 0 : bytes) << " bytes\n";
  }
  const std::vector<engine::TimingCacheRecord> records = engine::read_timing_cache(o.timing_cache);
  size_t trusted = 0;
  for (const auto& r : records) trusted += r.entry && engine::timing_entry_trusted(*r.entry) ? 1 : 0;
  std::cout << "timing cache " << (o.timing_cache.empty() ? "(none)" : o.timing_cache) << ": "
            << records.size() << " choices, " << trusted << " trusted, " << records.size() - trusted
            << " timed again by the next build\n";
  for (const auto& r : records) {
    if (!r.entry) {
      std::cout << "  " << r.key << "  (old format: " << r.text << ")  re-time\n";
      continue;
    }
    const engine::TimingEntry& e = *r.entry;
    char figures[128];
    std::snprintf(figures, sizeof(figures), "margin %+6.1f%%  spread %5.1f%%  cpu %.2f  agree %d",
                  100 * e.margin, 100 * e.spread, e.cpu_share, e.agreements);
    std::string flags;
    for (auto [on, name] :
         {std::pair{e.close, "close"}, {e.loaded, "loaded"}, {e.noisy, "noisy"}, {e.cut_short, "short"}}) {
      if (on) flags += (flags.empty() ? "" : ",") + std::string(name);
    }
    std::cout << "  " << r.key << "  " << e.tactic << "  " << figures << "  " << when(e.timed_at) << "  "
              << (flags.empty() ? "" : "[" + flags + "]  ")
              << (engine::timing_entry_trusted(e) ? "trusted" : "re-time") << "\n";
  }
  return kExitOk;
}

int clear_caches(const CacheOptions& o) {
  KILN_CHECK(!(o.engines_only && o.timing_only), InvalidInput, "--engines and --timing exclude each other");
  if (!o.timing_only) {
    compiler::DiskEngineCache engines(engine_dir(o), std::numeric_limits<int64_t>::max());
    size_t removed = 0;
    for (const std::string& h : engines.hashes()) {
      std::error_code ec;
      removed += fs::remove(engines.entry_path(h), ec) ? 1 : 0;
    }
    std::cout << "engine cache " << engines.directory() << ": removed " << removed << " engines\n";
  }
  if (!o.engines_only && !o.timing_cache.empty()) {
    const size_t entries = engine::read_timing_cache(o.timing_cache).size();
    std::error_code ec;
    const bool removed = fs::remove(o.timing_cache, ec);
    KILN_CHECK(!ec, Io, "cannot remove the timing cache '", o.timing_cache, "': ", ec.message());
    std::cout << "timing cache " << o.timing_cache << ": "
              << (removed ? "removed " + std::to_string(entries) + " choices" : "none") << "\n";
  }
  return kExitOk;
}

}  // namespace

Action setup_cache(CLI::App& app) {
  auto options = std::make_shared<CacheOptions>();
  app.require_subcommand(1);
  auto add_locations = [&](CLI::App* sub) {
    sub->add_option("--cache-dir", options->cache_dir,
                    "Engine cache directory (default: the one kiln compile uses)");
    sub->add_option("--timing-cache", options->timing_cache, "Timing cache file")->capture_default_str();
  };
  CLI::App* list =
      app.add_subcommand("list", "Show the cached engines and the timing cache's tactic choices");
  add_locations(list);
  CLI::App* clear = app.add_subcommand("clear", "Remove the cached engines and the timing cache");
  add_locations(clear);
  clear->add_flag("--engines", options->engines_only, "Only the engine cache");
  clear->add_flag("--timing", options->timing_only, "Only the timing cache");
  return [options, list]() { return list->parsed() ? list_caches(*options) : clear_caches(*options); };
}

}  // namespace kiln::cli
