#pragma once
// Tactic selection: for every kernel layer, time the backend's optimized candidates at the profile's opt
// shape and choose (tactic_choice.h; reference kernels only as the fallback); a timing cache file keeps
// trusted choices (timing_cache.h). Leaves the chosen kernels in plan.kernels and the counts in
// plan.tactic_stats.

#include "engine/core/plan_impl.h"
#include "kiln/engine/builder.h"

namespace kiln::engine {

void select_tactics(Plan::Impl& plan, const BuilderConfig& config);

}  // namespace kiln::engine
