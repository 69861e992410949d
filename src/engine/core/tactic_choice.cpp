#include "engine/core/tactic_choice.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::engine {

double TimingConditions::cpu_share() const { return wall_ms > 0.0 ? cpu_ms / wall_ms : 1.0; }

double best_time(const CandidateFigures& figures) {
  const std::vector<double>& ms = figures.rounds_ms.empty() ? figures.warm_up_ms : figures.rounds_ms;
  return ms.empty() ? std::numeric_limits<double>::infinity() : *std::min_element(ms.begin(), ms.end());
}

double spread_of(const std::vector<double>& ms) {
  if (ms.size() < 2) return 0.0;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double upper_quartile = sorted[(3 * (sorted.size() - 1) + 3) / 4];
  return sorted[0] > 0.0 ? (upper_quartile - sorted[0]) / sorted[0] : 0.0;
}

bool gets_second_warm_up(double first_ms, double best_first_ms) {
  // A candidate whose first run took at most 100 ms always warms up further, however much faster the fastest
  // first run was: oneDNN's JIT for a small matmul took 8-25 ms on a loaded 2-core machine, over 200x the
  // reference kernel's run, and the reference kernel (15x slower once warm) won.
  return first_ms <= 100.0 || first_ms <= 200 * best_first_ms;
}

bool warm_up_settled(const std::vector<double>& warm_up_ms) {
  if (warm_up_ms.size() < 2) return false;
  const double a = warm_up_ms[warm_up_ms.size() - 2], b = warm_up_ms.back();
  return std::abs(a - b) <= 0.1 * std::min(a, b);
}

TacticChoice choose_tactic(const std::vector<CandidateFigures>& candidates,
                           const TimingConditions& conditions) {
  TacticChoice choice;
  choice.cpu_share = conditions.cpu_share();
  choice.loaded = choice.cpu_share < kLoadedCpuShare;
  const CandidateFigures* fastest = nullptr;
  for (const CandidateFigures& c : candidates) {
    if (!c.failed && (!fastest || best_time(c) < best_time(*fastest))) fastest = &c;
  }
  if (!fastest || !std::isfinite(best_time(*fastest))) return choice;
  const double t_fast = best_time(*fastest);
  auto spread = [](const CandidateFigures& c) {
    return spread_of(c.rounds_ms.empty() ? c.warm_up_ms : c.rounds_ms);
  };
  // On a loaded machine every run may have shared its core (all stalled alike, so the spreads look calm):
  // only a win beyond kMaxNoiseMargin overrides the preference order.
  auto within_noise = [&](const CandidateFigures& c) {
    const double noise = choice.loaded
                             ? kMaxNoiseMargin
                             : std::min(kMaxNoiseMargin, std::max({kMinMargin, spread(c), spread(*fastest)}));
    return best_time(c) <= t_fast * (1.0 + noise);
  };
  const CandidateFigures* chosen = fastest;
  for (const CandidateFigures& c : candidates) {  // preference order: the earliest within noise wins
    if (!c.failed && within_noise(c)) {
      chosen = &c;
      break;
    }
  }
  // The best other candidate, to state the margin and whether the contest was close.
  const CandidateFigures* other = nullptr;
  for (const CandidateFigures& c : candidates) {
    if (&c != chosen && !c.failed && (!other || best_time(c) < best_time(*other))) other = &c;
  }
  choice.tactic = chosen->tactic;
  choice.time_ms = best_time(*chosen);
  choice.spread = spread(*chosen);
  if (other) {
    choice.margin = (best_time(*other) - choice.time_ms) / choice.time_ms;
    choice.spread = std::max(choice.spread, spread(*other));
    choice.close = chosen != fastest || within_noise(*other);
  }
  choice.noisy = choice.spread > kNoisySpread;
  return choice;
}

}  // namespace kiln::engine
