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
  // Only optimized kernels are timed (kReferenceTactic never is, nor oneDNN's reference implementations), so
  // first runs are JIT against JIT: a candidate 10x behind the fastest one there, over the JIT's 25 ms, is
  // slow in its own right (oneDNN's reference convolution: 25-121 ms a run against 0.2-12 ms).
  return first_ms <= kAlwaysWarmUpMs || first_ms <= kNoWarmUpRatio * best_first_ms;
}

double best_so_far(const CandidateFigures& figures) {
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 1; i < figures.warm_up_ms.size(); ++i) best = std::min(best, figures.warm_up_ms[i]);
  for (double ms : figures.rounds_ms) best = std::min(best, ms);
  return best;
}

double run_time_ms(double wall_ms, double thread_cpu_ms, bool one_thread_on_host) {
  return one_thread_on_host && thread_cpu_ms >= 0.0 ? std::min(wall_ms, thread_cpu_ms) : wall_ms;
}

double device_run_ms(double device_ms, double host_enqueue_ms, bool runs_plainly) {
  return runs_plainly ? std::max(device_ms, host_enqueue_ms) : device_ms;
}

bool out_of_the_running(const CandidateFigures& figures, double fastest_ms, bool loaded) {
  const size_t runs =
      figures.rounds_ms.size() + (figures.warm_up_ms.empty() ? 0 : figures.warm_up_ms.size() - 1);
  return runs >= (loaded ? 4u : 2u) && best_so_far(figures) > kHopelessRatio * fastest_ms;
}

ContestBudget contest_budget(double build_spent_ms) {
  ContestBudget b;
  const double left = kBuildTimingBudgetMs - build_spent_ms;
  if (left <= 0.0) {
    b.max_warm_up_runs = 1;
    b.warm_up_ms = 0.0;
    b.min_rounds = kCutShortRounds;
    b.rounds_ms = 0.0;
    b.cut_short = true;
    return b;
  }
  b.rounds_ms = std::min(kRoundsBudgetMs, left / kContestShareOfBudget);
  b.warm_up_ms = std::min(kWarmUpBudgetMs, b.rounds_ms);
  return b;
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
  choice.cut_short = conditions.cut_short;
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
