#pragma once
// Tactic selection: for every kernel layer, time the backend's candidates at the profile's opt shape and
// keep the fastest (a timing cache file skips re-timing); leaves the chosen kernels in plan.kernels.

#include "engine/core/plan_impl.h"
#include "kiln/engine/builder.h"

namespace kiln::engine {

void select_tactics(Plan::Impl& plan, const BuilderConfig& config);

/// Whether a candidate whose first run took `first_ms` runs a second warm-up before it is compared, when the
/// layer's fastest first run took `best_first_ms`: unless it took over 100 ms and 200x the fastest (a first
/// run pays one-time costs such as oneDNN's JIT, which must not decide; a candidate that slow is not worth
/// another run).
bool gets_second_warm_up(double first_ms, double best_first_ms);

}  // namespace kiln::engine
