// `kiln bench --profile`: the per-layer profile as a table or JSON.

#include "layer_profile_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

namespace kiln::cli {
namespace {

/// Mean time per run of a layer or a layer kind, and its share of all layers' time.
struct Row {
  const engine::LayerProfileRecord* layer = nullptr;  // null for a kind's row
  std::string kind;
  size_t layers = 1;
  double ms_per_run = 0.0;
  double percent = 0.0;
  double host_ms_per_run = 0.0;  // enqueuing on the host (device-time profiles)
};

struct Summary {
  std::vector<Row> layers, kinds;  // sorted by time, longest first
  double ms_per_run = 0.0;         // all layers
  double host_ms_per_run = 0.0;    // all layers' enqueuing on the host (device-time profiles)
};

Summary summarize(const std::vector<engine::LayerProfileRecord>& profile, int runs) {
  Summary s;
  std::map<std::string, Row> kinds;
  for (const engine::LayerProfileRecord& r : profile) {
    const double ms = r.total_ms / std::max(runs, 1), host_ms = r.host_ms / std::max(runs, 1);
    s.layers.push_back({&r, r.kind, 1, ms, 0.0, host_ms});
    auto [it, added] = kinds.emplace(r.kind, Row{nullptr, r.kind, 0, 0.0, 0.0, 0.0});
    ++it->second.layers;
    it->second.ms_per_run += ms;
    it->second.host_ms_per_run += host_ms;
    s.ms_per_run += ms;
    s.host_ms_per_run += host_ms;
  }
  for (auto& [kind, row] : kinds) s.kinds.push_back(row);
  for (auto* rows : {&s.layers, &s.kinds}) {
    for (Row& row : *rows) row.percent = s.ms_per_run > 0.0 ? 100.0 * row.ms_per_run / s.ms_per_run : 0.0;
    std::stable_sort(rows->begin(), rows->end(),
                     [](const Row& a, const Row& b) { return a.ms_per_run > b.ms_per_run; });
  }
  return s;
}

std::string format(const char* pattern, double a, double b) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), pattern, a, b);
  return buf;
}

std::string padded(const std::string& s, size_t width) {
  return s + std::string(width - std::min(width, s.size()), ' ');
}

}  // namespace

void print_layer_profile(std::ostream& out, const std::vector<engine::LayerProfileRecord>& profile, int runs,
                         double wall_ms) {
  const Summary s = summarize(profile, runs);
  size_t kind_width = 4, tactic_width = 6;
  for (const engine::LayerProfileRecord& r : profile) {
    kind_width = std::max(kind_width, r.kind.size());
    tactic_width = std::max(tactic_width, r.tactic.size());
  }
  const bool device =
      std::any_of(profile.begin(), profile.end(), [](const auto& r) { return r.device_time; });
  out << "layer profile over " << runs
      << (device
              ? " runs (engine layers in device time, run back to back; PyTorch runs in wall time): layers "
              : " runs: layers ")
      << format("%.3f ms/run of %.3f ms/run wall", s.ms_per_run, wall_ms / std::max(runs, 1));
  if (device) out << format("; enqueuing them took the host %.3f ms/run", s.host_ms_per_run, 0.0);
  out << "\n";
  // Device-time profiles add the host's enqueue time per layer (what a run without CUDA graphs pays).
  auto host = [&](const Row& row) { return device ? format("  %9.4f", row.host_ms_per_run, 0.0) : ""; };
  out << "     ms/run        %" << (device ? "    host ms" : "") << "  " << padded("kind", kind_width) << "  "
      << padded("tactic", tactic_width) << "  layer\n";
  for (const Row& row : s.layers) {
    out << format("  %9.4f  %6.2f%%", row.ms_per_run, row.percent) << host(row) << "  "
        << padded(row.kind, kind_width) << "  " << padded(row.layer->tactic, tactic_width) << "  "
        << row.layer->name << "\n";
  }
  out << "  per kind:\n";
  for (const Row& row : s.kinds) {
    out << format("  %9.4f  %6.2f%%", row.ms_per_run, row.percent) << host(row) << "  "
        << padded(row.kind, kind_width) << "  " << row.layers << (row.layers == 1 ? " layer" : " layers")
        << "\n";
  }
  out.flush();
}

nlohmann::json layer_profile_json(const std::vector<engine::LayerProfileRecord>& profile, int runs,
                                  double wall_ms) {
  const Summary s = summarize(profile, runs);
  nlohmann::json j;
  j["runs"] = runs;
  j["wall_ms_per_run"] = wall_ms / std::max(runs, 1);
  j["layers_ms_per_run"] = s.ms_per_run;
  j["device_time"] = std::any_of(profile.begin(), profile.end(), [](const auto& r) { return r.device_time; });
  if (j["device_time"]) j["layers_host_ms_per_run"] = s.host_ms_per_run;
  j["layers"] = nlohmann::json::array();
  for (const Row& row : s.layers) {
    j["layers"].push_back({{"name", row.layer->name},
                           {"kind", row.kind},
                           {"tactic", row.layer->tactic},
                           {"calls", row.layer->calls},
                           {"ms_per_run", row.ms_per_run},
                           {"host_ms_per_run", row.host_ms_per_run},
                           {"percent", row.percent}});
  }
  j["kinds"] = nlohmann::json::array();
  for (const Row& row : s.kinds) {
    j["kinds"].push_back({{"kind", row.kind},
                          {"layers", row.layers},
                          {"ms_per_run", row.ms_per_run},
                          {"host_ms_per_run", row.host_ms_per_run},
                          {"percent", row.percent}});
  }
  return j;
}

}  // namespace kiln::cli
