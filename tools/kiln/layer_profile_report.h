#pragma once
// `kiln bench --profile`: a module's per-layer profile (runtime::CompiledModule::layer_profile) as a table
// sorted by time with totals per layer kind, or as JSON.

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/engine/layer_profile.h"

namespace kiln::cli {

/// Prints `profile`, collected over `runs` executions that took `wall_ms` in all, as a table sorted by time:
/// mean ms per run, % of the layers' total, kind, tactic and layer name; then the same per layer kind.
void print_layer_profile(std::ostream& out, const std::vector<engine::LayerProfileRecord>& profile, int runs,
                         double wall_ms);

/// The same as JSON: {"runs", "wall_ms_per_run", "layers_ms_per_run", "layers": [{"name", "kind", "tactic",
/// "calls", "ms_per_run", "percent"}], "kinds": [{"kind", "layers", "ms_per_run", "percent"}]}, lists sorted
/// by time.
nlohmann::json layer_profile_json(const std::vector<engine::LayerProfileRecord>& profile, int runs,
                                  double wall_ms);

}  // namespace kiln::cli
