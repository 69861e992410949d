#pragma once
// Tactic selection: for every kernel layer, time the backend's candidates at the profile's opt shape and
// keep the fastest (a timing cache file skips re-timing); leaves the chosen kernels in plan.kernels.

#include "engine/core/plan_impl.h"
#include "kiln/engine/builder.h"

namespace kiln::engine {

void select_tactics(Plan::Impl& plan, const BuilderConfig& config);

}  // namespace kiln::engine
