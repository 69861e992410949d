#pragma once
// The tactic choice as a pure function over measured figures: which of a layer's optimized candidates wins,
// by what margin, and whether the figures can be trusted (the run-to-run spread, the share of the wall time
// the timing thread got a core). The builder's timing (tactics.cpp) measures, this decides; unit tests drive
// it with figures measured on an idle and on a loaded machine, without timing anything.

#include <string>
#include <vector>

namespace kiln::engine {

/// The tactic name of reference kernels (the CPU backend's "ref" rows): the fallback for layers no optimized
/// kernel takes (or whose optimized kernels all fail to build), never timed against optimized ones.
inline constexpr const char* kReferenceTactic = "ref";

/// A contest decided by less than this fraction of the fastest time is within timing noise, whatever the
/// spread.
inline constexpr double kMinMargin = 0.05;
/// The noise a contest is judged against is the candidates' spread, but at most this: on a loaded machine a
/// candidate measured this much faster than the preferred one (2x) still wins, and the choice is re-timed.
inline constexpr double kMaxNoiseMargin = 1.0;
/// Figures whose spread (see spread_of) exceeds this are noisy: the choice is uncertain.
inline constexpr double kNoisySpread = 0.3;
/// The timing thread got a core for less than this share of the wall time of the timed rounds (its CPU time
/// over wall time): the machine was loaded, and the choice is uncertain. The thread that runs the kernels
/// takes part in every parallel loop and only waits for the last chunks, so on an idle machine it computes
/// nearly all the time; measured on the shared 2-core machine while resnet18's convolutions were timed on 2
/// threads: 0.11-0.14 with other people's builds running (load average 13-17), 0.05-0.08 with two CPU burners
/// on top.
inline constexpr double kLoadedCpuShare = 0.75;

/// Timed rounds per contest, whatever BuilderConfig::timing_iterations says below it: the spread that says
/// whether figures can be trusted needs a few runs.
inline constexpr int kMinRounds = 5;
/// Warm-up runs of a candidate stop when they settle (warm_up_settled), after this many runs, or once the
/// runs after the first took kWarmUpBudgetMs.
inline constexpr int kMaxWarmUps = 8;
inline constexpr double kWarmUpBudgetMs = 100.0;
/// Rounds stop early, after kMinRounds / 2 + 1 of them, once they took this long (large layers).
inline constexpr double kRoundsBudgetMs = 2000.0;
/// A candidate whose best time so far is over this multiple of the fastest one's leaves the rounds: with the
/// noise margin capped at kMaxNoiseMargin it can win only within 2x of the fastest (choose_tactic); the other
/// half of the fastest's time is room for the noise of minima over a few runs.
inline constexpr double kHopelessRatio = 1.5 * (1.0 + kMaxNoiseMargin);
/// A first run (JIT included) over kAlwaysWarmUpMs and over this multiple of the layer's fastest first run
/// ends the candidate's warm-up: it goes to the rounds as it is (see gets_second_warm_up).
inline constexpr double kNoWarmUpRatio = 10.0;
/// First runs up to this always warm up further: oneDNN's JIT took 8-25 ms a kernel on a loaded 2-core
/// machine.
inline constexpr double kAlwaysWarmUpMs = 25.0;
/// Wall time a build spends in contests (creating, warming up and timing the candidates of every timed
/// layer), in ms. Each contest may spend at most 1/kContestShareOfBudget of what is left of it on its rounds
/// (and at most kRoundsBudgetMs); once it is spent, every further contest runs the minimum and is cut short
/// (contest_budget).
inline constexpr double kBuildTimingBudgetMs = 20000.0;
inline constexpr double kContestShareOfBudget = 8.0;
/// The rounds a cut-short contest runs (after each candidate's first run, without warm-up).
inline constexpr int kCutShortRounds = 2;

/// What one candidate measured, in milliseconds: its warm-up runs in order (the first pays one-time costs
/// such as oneDNN's JIT) and one run per timed round (empty when it was left out of the rounds).
struct CandidateFigures {
  std::string tactic;
  std::vector<double> warm_up_ms;
  std::vector<double> rounds_ms;
  bool failed = false;  // it threw while being timed: never chosen
};

/// The conditions the timed rounds ran under: their wall time and the CPU time of the thread that ran them.
struct TimingConditions {
  double wall_ms = 0.0;
  double cpu_ms = 0.0;
  /// The contest ran fewer rounds than it would have because the build's timing budget was (nearly) spent
  /// (ContestBudget): its choice is uncertain.
  bool cut_short = false;
  /// cpu_ms / wall_ms (1 when nothing was measured).
  double cpu_share() const;
};

/// How much timing one contest may do, given the wall time the build's contests took before it.
struct ContestBudget {
  int max_warm_up_runs = kMaxWarmUps;   // warm-up runs, the first included
  double warm_up_ms = kWarmUpBudgetMs;  // per candidate, the runs after the first
  int min_rounds = kMinRounds / 2 + 1;  // rounds run whatever they cost
  double rounds_ms = kRoundsBudgetMs;   // later rounds stop once the rounds took this long
  /// The build's budget is spent: the contest runs the minimum (no warm-up after the first run,
  /// kCutShortRounds rounds) and its choice is uncertain, timed again next build.
  bool cut_short = false;
};

/// The budget of a contest after the build's contests took `build_spent_ms` of kBuildTimingBudgetMs: the
/// rounds budget shrinks with what is left (1/kContestShareOfBudget of it, at most kRoundsBudgetMs), so that
/// hundreds of layers on a loaded machine cannot spend minutes timing; none left: cut short.
ContestBudget contest_budget(double build_spent_ms);

/// The outcome of one contest.
struct TacticChoice {
  std::string tactic;    // empty when every candidate failed
  double time_ms = 0.0;  // the chosen candidate's best time
  /// How much faster the chosen candidate measured than the best other one, as a fraction of its time:
  /// positive when it was the fastest, negative when the preference order chose it within noise although
  /// another measured faster; 0 without another candidate.
  double margin = 0.0;
  /// The larger spread of the chosen candidate and the fastest other one (spread_of).
  double spread = 0.0;
  double cpu_share = 1.0;  // TimingConditions::cpu_share
  bool close = false;      // another candidate was within noise of it: the preference order decided
  bool loaded = false;     // cpu_share < kLoadedCpuShare
  bool noisy = false;      // spread > kNoisySpread
  bool cut_short = false;  // TimingConditions::cut_short
  /// Whether the figures cannot be trusted (a loaded machine, noisy figures or a contest cut short by the
  /// build's timing budget): time the layer again next build.
  bool uncertain() const { return loaded || noisy || cut_short; }
};

/// The best time of a candidate: the minimum of its rounds (noise from other work only ever adds time), or of
/// its warm-up runs when it was left out of the rounds.
double best_time(const CandidateFigures& figures);

/// The run-to-run spread of `ms`: (upper quartile - minimum) / minimum, 0 for fewer than two runs. Stalls of
/// a quarter or more of the runs (a descheduled OpenMP team: 12-16 ms on a loaded machine) show here even
/// when the minimum looks fine.
double spread_of(const std::vector<double>& ms);

/// Whether a candidate whose first run took `first_ms` warms up further (until warm_up_settled) when the
/// layer's fastest first run took `best_first_ms`: unless it took over kAlwaysWarmUpMs and kNoWarmUpRatio x
/// the fastest. A first run pays one-time costs such as oneDNN's JIT, which must not decide: such a candidate
/// still goes to the rounds (which run after its JIT), it only gets no warm-up runs of its own.
bool gets_second_warm_up(double first_ms, double best_first_ms);

/// The best time of a candidate so far, for leaving the rounds early: the minimum of its runs after the first
/// (warm-ups and rounds; the first pays one-time costs), infinite with none.
double best_so_far(const CandidateFigures& figures);

/// The time of one timed run: its wall time, or, for a kernel that ran on the timing thread alone on the host
/// (a one-thread pool), the thread's CPU time when less. The scheduler's time slices for other processes are
/// no cost of the kernel: under two CPU burners on the 2-core machine, mobilenet_v3_large's stem
/// convolution's blocked tactic measured 12.8 ms of wall time in every run of one contest (0.25 ms in the
/// contests around it) and lost to a plain one that runs 1.8 ms.
double run_time_ms(double wall_ms, double thread_cpu_ms, bool one_thread_on_host);

/// The time of one run on a backend that records device work: the device time of a recorded run, or, in an
/// engine that runs without CUDA graphs (`runs_plainly`: dynamic input dims), at least the host's time to
/// enqueue the run, which then bounds it: a legacy cuDNN grouped convolution of regnet_y_1_6gf at batch 1
/// took 0.02 ms of device time and 0.37 ms of the host's per call, and won on device time against a graph API
/// one that takes 0.01 ms to enqueue (the engine ran 14.4 ms plainly against 2.9 ms replayed).
double device_run_ms(double device_ms, double host_enqueue_ms, bool runs_plainly);

/// Whether a candidate is out of the running, with `fastest_ms` the smallest best_so_far of the layer's
/// candidates: it has at least two runs after its first (one stall does not decide; four when the rounds so
/// far ran on a `loaded` machine, where runs stall in scheduler quanta of 4 ms: a 2.3 ms convolution measured
/// 16.4 ms twice in a row here at load 6) and their minimum is over kHopelessRatio x `fastest_ms`. Such a
/// candidate could not win choose_tactic; it leaves the rounds.
bool out_of_the_running(const CandidateFigures& figures, double fastest_ms, bool loaded = false);

/// Whether a candidate's warm-up has settled: its last two runs are within 10% of each other.
bool warm_up_settled(const std::vector<double>& warm_up_ms);

/// Chooses among `candidates`, given in preference order (the first is the one the backend's cost model or
/// oneDNN's own ordering ranks first). The fastest by best_time wins unless an earlier candidate is within
/// noise of it: within max(kMinMargin, the larger spread of the two), capped at kMaxNoiseMargin, and
/// kMaxNoiseMargin whenever the machine was loaded (measured with builds running on 2 cores: runs of resnet18
/// convolutions stalled to 30-50 ms, all alike, so the spreads looked calm); then the earliest such candidate
/// wins and the contest is close. Failed candidates never win.
TacticChoice choose_tactic(const std::vector<CandidateFigures>& candidates,
                           const TimingConditions& conditions);

}  // namespace kiln::engine
