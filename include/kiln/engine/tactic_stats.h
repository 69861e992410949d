#pragma once
// TacticStats: how a build chose the tactics of a plan's kernel layers (for the compile report and tests).

namespace kiln::engine {

class Plan;

/// Counts over a plan's kernel layers, set by the build (not serialized: zero in a loaded plan).
struct TacticStats {
  int timed = 0;    // contests timed in this build (re-timed ones included)
  int retimed = 0;  // of those, layers whose timing-cache entry from before this build was not trusted
                    // (uncertain, close or old)
  int uncertain = 0;   // of those, timed on a loaded machine, noisy or cut short (timed again next build)
  int cut_short = 0;   // of the uncertain, contests cut short by the build's timing budget (contest_budget)
  int from_cache = 0;  // choices taken from trusted timing-cache entries of earlier builds
  int reused = 0;      // choices taken from a layer of this build with the same signature and input formats
  int untimed = 0;     // layers with at most one optimized candidate, or built without timing
  int reference = 0;   // layers running a reference kernel (no optimized tactic applies or builds)
  int failed = 0;      // candidates of timed contests that failed being made or run, other than by refusing
                       // the layer (Unsupported): a bug or an out-of-memory, never a normal outcome
};

/// How the build of `plan` chose its tactics (zero for a deserialized plan).
const TacticStats& tactic_stats(const Plan& plan);

}  // namespace kiln::engine
