// The tactic choice as a pure function (engine/core/tactic_choice.h), driven with figures of the kind
// measured on this 2-core machine: idle, and with two CPU burners (`yes > /dev/null` twice) running. Nothing
// is timed here.

#include "engine/core/tactic_choice.h"

#include <gtest/gtest.h>

#include <limits>

namespace kiln::engine {
namespace {

CandidateFigures figures(std::string tactic, std::vector<double> warm_up, std::vector<double> rounds) {
  CandidateFigures f;
  f.tactic = std::move(tactic);
  f.warm_up_ms = std::move(warm_up);
  f.rounds_ms = std::move(rounds);
  return f;
}

// Idle: the timing thread computes nearly all the wall time of the rounds (0.97 here).
const TimingConditions kIdle{10.0, 9.7};
// Two burners and builds on 2 cores, 2 kernel threads: the timing thread got a core for 0.07 of the wall time
// (measured while timing resnet18's convolutions: 0.05-0.08).
const TimingConditions kLoaded{10.0, 0.7};

TEST(TacticChoice, IdleClearWinIsTrusted) {
  // A 16-channel 3x3 convolution on 14x14: blocked 0.021 ms, plain 0.030 ms, runs within 5% of each other.
  TacticChoice c =
      choose_tactic({figures("onednn_blocked", {6.1, 0.024, 0.022}, {0.021, 0.021, 0.022, 0.021, 0.0215}),
                     figures("onednn", {5.4, 0.032, 0.031}, {0.030, 0.031, 0.030, 0.0305, 0.030})},
                    kIdle);
  EXPECT_EQ(c.tactic, "onednn_blocked");
  EXPECT_NEAR(c.margin, (0.030 - 0.021) / 0.021, 1e-9);  // exact arithmetic on the figures above
  EXPECT_FALSE(c.close);
  EXPECT_FALSE(c.loaded);
  EXPECT_FALSE(c.noisy);
  EXPECT_FALSE(c.uncertain());
}

TEST(TacticChoice, IdleFasterNonPreferredWinsBeyondNoise) {
  // The second candidate in preference order is 30% faster with tight runs: it wins, not close.
  TacticChoice c = choose_tactic({figures("onednn_blocked", {3.0, 0.13}, {0.130, 0.131, 0.130, 0.132, 0.130}),
                                  figures("onednn", {2.0, 0.10}, {0.100, 0.101, 0.100, 0.100, 0.102})},
                                 kIdle);
  EXPECT_EQ(c.tactic, "onednn");
  EXPECT_NEAR(c.margin, 0.3, 1e-9);
  EXPECT_FALSE(c.close);
  EXPECT_FALSE(c.uncertain());
}

TEST(TacticChoice, WithinNoiseThePreferenceOrderDecides) {
  // 2.4% apart on an idle machine: within kMinMargin, the first in preference order wins and the margin says
  // by how much it measured slower.
  TacticChoice c =
      choose_tactic({figures("onednn_blocked", {4.0, 0.0215}, {0.0210, 0.0211, 0.0212, 0.0210, 0.0210}),
                     figures("onednn", {4.0, 0.021}, {0.0205, 0.0206, 0.0207, 0.0205, 0.0206})},
                    kIdle);
  EXPECT_EQ(c.tactic, "onednn_blocked");
  EXPECT_TRUE(c.close);
  EXPECT_LT(c.margin, 0.0);
  EXPECT_FALSE(c.uncertain());
}

TEST(TacticChoice, LoadedMachineStallsAreUncertainAndPreferenceWins) {
  // With two burners the OpenMP team of a 2-thread kernel waits for the scheduler: 12-16 ms stalls in some
  // runs of a 0.04 ms convolution, and oneDNN's first run (its JIT) took 8-25 ms. The plain kernel's minimum
  // is 11% lower, within the noise such runs have: the preferred kernel stays, and the choice is marked
  // uncertain.
  TacticChoice c =
      choose_tactic({figures("onednn_blocked", {18.5, 0.9, 0.05, 0.048}, {0.045, 13.8, 0.052, 15.2, 0.047}),
                     figures("onednn", {8.3, 12.1, 0.046, 0.044}, {0.040, 0.061, 12.4, 0.044, 16.1})},
                    kLoaded);
  EXPECT_EQ(c.tactic, "onednn_blocked");
  EXPECT_TRUE(c.close);
  EXPECT_TRUE(c.loaded);
  EXPECT_TRUE(c.noisy);
  EXPECT_TRUE(c.uncertain());
  EXPECT_NEAR(c.cpu_share, 0.07, 1e-12);
}

TEST(TacticChoice, LoadedMachineOnlyLoadIsEnoughForUncertainty) {
  // Every run slowed alike (the thread shared its core the whole time): tight figures, but the thread
  // computed for 0.07 of the wall time, so the choice is re-timed next build.
  TacticChoice c = choose_tactic({figures("onednn_blocked", {9.0, 0.09}, {0.090, 0.091, 0.092, 0.090, 0.090}),
                                  figures("onednn", {9.0, 0.15}, {0.150, 0.151, 0.150, 0.152, 0.150})},
                                 kLoaded);
  EXPECT_EQ(c.tactic, "onednn_blocked");
  EXPECT_FALSE(c.noisy);
  EXPECT_TRUE(c.loaded);
  EXPECT_TRUE(c.uncertain());
}

TEST(TacticChoice, LoadedMachineCalmStallsDoNotOverrideThePreference) {
  // resnet18's second convolution compiled while builds ran on both cores (the timing thread computed for
  // 0.12 of the wall time): it measured 32-52 ms in every run, many times its idle time, so the spreads look
  // calm. 62% apart is no evidence there: the preferred kernel stays, and the choice is re-timed next build.
  TacticChoice c = choose_tactic({figures("onednn_blocked", {60.2, 52.5}, {51.97, 52.3, 52.1, 52.0, 52.4}),
                                  figures("onednn", {40.1, 32.0}, {31.98, 32.0, 32.01, 31.99, 32.0})},
                                 TimingConditions{500.0, 60.0});
  EXPECT_EQ(c.tactic, "onednn_blocked");
  EXPECT_TRUE(c.close);
  EXPECT_FALSE(c.noisy);
  EXPECT_TRUE(c.loaded);
  EXPECT_LT(c.margin, 0.0);
  // The same figures on an idle machine: the plain kernel wins by 62%.
  EXPECT_EQ(choose_tactic({figures("onednn_blocked", {60.2, 52.5}, {51.97, 52.3, 52.1, 52.0, 52.4}),
                           figures("onednn", {40.1, 32.0}, {31.98, 32.0, 32.01, 31.99, 32.0})},
                          kIdle)
                .tactic,
            "onednn");
}

TEST(TacticChoice, LoadedMachineTwiceFasterStillWins) {
  // Noise counts for at most kMaxNoiseMargin (100%): a candidate measured 3x faster wins even on a loaded
  // machine.
  TacticChoice c = choose_tactic({figures("onednn_blocked", {20.0, 0.31}, {0.30, 14.0, 0.33, 12.9, 0.31}),
                                  figures("onednn", {15.0, 0.11}, {0.10, 0.12, 15.5, 0.11, 13.0})},
                                 kLoaded);
  EXPECT_EQ(c.tactic, "onednn");
  EXPECT_FALSE(c.close);
  EXPECT_TRUE(c.uncertain());
}

TEST(TacticChoice, FailedCandidatesNeverWin) {
  CandidateFigures broken = figures("onednn_blocked", {0.001}, {0.001, 0.001, 0.001});
  broken.failed = true;
  TacticChoice c = choose_tactic({broken, figures("onednn", {1.0, 0.2}, {0.2, 0.2, 0.2})}, kIdle);
  EXPECT_EQ(c.tactic, "onednn");
  EXPECT_EQ(c.margin, 0.0);  // no other candidate to compare with
  EXPECT_FALSE(c.close);
  EXPECT_TRUE(choose_tactic({broken}, kIdle).tactic.empty());
}

TEST(TacticChoice, CandidateLeftOutOfRoundsKeepsItsWarmUpTimes) {
  // A candidate 20x slower after warm-up is not timed further and loses with its warm-up figures.
  TacticChoice c = choose_tactic(
      {figures("slow", {60.0, 41.0, 40.0}, {}), figures("onednn", {8.0, 0.5, 0.5}, {0.5, 0.5, 0.5})}, kIdle);
  EXPECT_EQ(c.tactic, "onednn");
  EXPECT_NEAR(c.margin, (40.0 - 0.5) / 0.5, 1e-9);
}

TEST(TacticChoice, SpreadAndBestTime) {
  EXPECT_EQ(spread_of({}), 0.0);
  EXPECT_EQ(spread_of({1.0}), 0.0);
  // Upper quartile of five sorted runs is the fourth: (1.2 - 1.0) / 1.0.
  EXPECT_NEAR(spread_of({1.1, 1.0, 9.0, 1.2, 1.05}), 0.2, 1e-12);
  // Two stalls in five runs reach the upper quartile.
  EXPECT_GT(spread_of({0.045, 13.8, 0.052, 15.2, 0.047}), kNoisySpread);
  EXPECT_EQ(best_time(figures("a", {5.0, 1.0}, {2.0, 3.0})), 2.0);  // rounds when there are any
  EXPECT_EQ(best_time(figures("a", {5.0, 1.0}, {})), 1.0);
}

TEST(TacticChoice, WarmUpSettlesAndFirstRunCostsDoNotDecide) {
  // oneDNN's JIT on a loaded machine: 18.5 ms, then 0.9, 0.05, 0.048: settled only once two runs agree within
  // 10%.
  EXPECT_FALSE(warm_up_settled({18.5}));
  EXPECT_FALSE(warm_up_settled({18.5, 0.9}));
  EXPECT_FALSE(warm_up_settled({18.5, 0.9, 0.05}));
  EXPECT_TRUE(warm_up_settled({18.5, 0.9, 0.05, 0.048}));
  // Measured on a loaded 2-core machine: oneDNN's first run of a small matmul (its JIT) 7.8-25 ms, 200x a
  // 0.035-0.09 ms first run of a kernel without JIT: up to 25 ms a first run always warms up further.
  EXPECT_TRUE(gets_second_warm_up(7.8, 0.035));
  EXPECT_TRUE(gets_second_warm_up(25.0, 0.09));
  EXPECT_TRUE(gets_second_warm_up(150.0, 20.0));  // within 10x of the fastest first run
  // densenet121 on the GPU machine: oneDNN's reference convolution's first run against onednn_blocked's (JIT
  // included): no warm-up runs of its own.
  EXPECT_FALSE(gets_second_warm_up(121.2, 6.9));
  EXPECT_FALSE(gets_second_warm_up(1000.0, 0.5));
  EXPECT_FALSE(gets_second_warm_up(30.0, 2.0));
}

// Figures of densenet121's convolution_2 on the GPU machine (issue 16): the blocked tactic 6.91 ms, oneDNN's
// reference convolution 121.2 ms (timed through warm-ups and 5 rounds before). 3x behind the fastest minimum
// over two runs after the first, a candidate cannot win (the noise margin is at most 2x): it leaves the
// rounds.
TEST(TacticChoice, HopelessCandidateLeavesTheRounds) {
  const CandidateFigures blocked = figures("onednn_blocked", {31.0, 7.2, 6.95}, {6.91});
  const CandidateFigures slow = figures("onednn", {130.0, 121.5}, {121.2});
  EXPECT_EQ(best_so_far(blocked), 6.91);
  EXPECT_EQ(best_so_far(slow), 121.2);
  EXPECT_TRUE(out_of_the_running(slow, best_so_far(blocked)));
  EXPECT_FALSE(out_of_the_running(blocked, best_so_far(blocked)));
  // One run after the first is not enough: a stall must not decide.
  EXPECT_FALSE(out_of_the_running(figures("onednn", {130.0}, {121.2}), 6.91));
  // The first run (JIT) is not counted; a stall in one of the later runs is outvoted by the minimum.
  EXPECT_EQ(best_so_far(figures("a", {30.0}, {})), std::numeric_limits<double>::infinity());
  EXPECT_FALSE(out_of_the_running(figures("onednn", {18.5, 0.05}, {13.8, 0.047}), 0.045));
  // 2.5x behind: within reach of a loaded machine's noise margin cap (2x) plus noise, it stays.
  EXPECT_FALSE(out_of_the_running(figures("onednn", {5.0, 0.11}, {0.1125}), 0.045));
  EXPECT_TRUE(out_of_the_running(figures("onednn", {5.0, 0.14}, {0.1351}), 0.045));
  // On a loaded machine two runs may both stall (resnet50's convolution_5 at load 6 here: the blocked tactic
  // 16.4 ms twice, 2.3 ms once warm): four runs after the first decide there.
  const CandidateFigures stalled = figures("onednn_blocked", {25.0, 16.4}, {16.38});
  EXPECT_TRUE(out_of_the_running(stalled, 2.315));
  EXPECT_FALSE(out_of_the_running(stalled, 2.315, true));
  EXPECT_TRUE(out_of_the_running(figures("onednn_blocked", {25.0, 16.4}, {16.38, 12.0, 8.0}), 2.315, true));
  // Such a candidate could not have won: choose_tactic on the same figures, idle or loaded, picks the
  // fastest.
  for (const TimingConditions& when : {kIdle, kLoaded}) {
    EXPECT_EQ(choose_tactic({slow, blocked}, when).tactic, "onednn_blocked");
  }
}

TEST(TacticChoice, BuildBudgetShrinksTheRoundsThenCutsContestsShort) {
  const ContestBudget fresh = contest_budget(0.0);
  EXPECT_EQ(fresh.rounds_ms, kRoundsBudgetMs);
  EXPECT_EQ(fresh.warm_up_ms, kWarmUpBudgetMs);
  EXPECT_EQ(fresh.max_warm_up_runs, kMaxWarmUps);
  EXPECT_FALSE(fresh.cut_short);
  // Each contest may spend 1/8 of what is left: 1 s with 8 s left, 125 ms with 1 s left.
  EXPECT_EQ(contest_budget(kBuildTimingBudgetMs - 8000.0).rounds_ms, 1000.0);
  EXPECT_EQ(contest_budget(kBuildTimingBudgetMs - 1000.0).rounds_ms, 125.0);
  EXPECT_EQ(contest_budget(kBuildTimingBudgetMs - 1000.0).warm_up_ms, kWarmUpBudgetMs);
  EXPECT_FALSE(contest_budget(kBuildTimingBudgetMs - 1.0).cut_short);
  // Spent: the minimum (first runs, kCutShortRounds rounds, no warm-up), marked so.
  const ContestBudget spent = contest_budget(kBuildTimingBudgetMs + 5.0);
  EXPECT_TRUE(spent.cut_short);
  EXPECT_EQ(spent.min_rounds, kCutShortRounds);
  EXPECT_EQ(spent.max_warm_up_runs, 1);
  // 500 contests that each spend their whole rounds and warm-up budgets stay within the build's.
  double total = 0.0;
  for (int i = 0; i < 500; ++i) {
    const ContestBudget b = contest_budget(total);
    if (b.cut_short) break;
    total += b.rounds_ms + b.warm_up_ms;
  }
  EXPECT_LE(total, kBuildTimingBudgetMs);
}

TEST(TacticChoice, ContestCutShortIsUncertain) {
  TimingConditions cut = kIdle;
  cut.cut_short = true;
  TacticChoice c = choose_tactic({figures("onednn_blocked", {6.1, 0.024}, {0.021, 0.021}),
                                  figures("onednn", {5.4, 0.032}, {0.030, 0.031})},
                                 cut);
  EXPECT_EQ(c.tactic, "onednn_blocked");
  EXPECT_FALSE(c.loaded);
  EXPECT_FALSE(c.noisy);
  EXPECT_TRUE(c.cut_short);
  EXPECT_TRUE(c.uncertain());
}

}  // namespace
}  // namespace kiln::engine

namespace kiln::engine {
namespace {

// A one-thread run on the host is charged its thread's CPU time: the figures of the contest that went wrong
// under two CPU burners (the blocked stem convolution: 12.8 ms of wall time, about 0.25 ms of work) no longer
// lose to the plain tactic's 1.8 ms. Multi-threaded or device runs keep their wall time (the timing thread's
// CPU time is not theirs).
TEST(TacticTiming, OneThreadRunsOnTheHostAreChargedTheirCpuTime) {
  EXPECT_DOUBLE_EQ(run_time_ms(12.76, 0.27, true), 0.27);
  EXPECT_DOUBLE_EQ(run_time_ms(12.76, 0.27, false), 12.76);
  EXPECT_DOUBLE_EQ(run_time_ms(1.0, 1.02, true), 1.0);  // CPU time read a little past the wall clock
  EXPECT_DOUBLE_EQ(run_time_ms(1.0, -1.0, true), 1.0);  // no CPU clock
  CandidateFigures blocked, plain;
  blocked.rounds_ms = {run_time_ms(12.76, 0.27, true), run_time_ms(12.9, 0.26, true)};
  plain.rounds_ms = {run_time_ms(1.86, 1.79, true), run_time_ms(1.9, 1.8, true)};
  EXPECT_LT(best_so_far(blocked), best_so_far(plain));
}

// regnet_y_1_6gf at batch 1, fp16, on an H100: its grouped 3x3 convolution_48, device times from the build's
// contest (cudnn_graph 0.005845 ms, cudnn_nhwc 0.005556 ms: the legacy one won by 5.2%), the host's time per
// call from the per-layer profile (a legacy grouped call 0.37 ms) and bench/gpu/cudnn_host_cost.cpp (a graph
// API call 0.006-0.012 ms). Replayed as a CUDA graph the legacy kernel is the right choice; in an engine that
// runs plainly each call costs what the host does, and the graph API one must win.
TEST(TacticTiming, PlainEnginesCountTheHostsEnqueueTime) {
  EXPECT_DOUBLE_EQ(device_run_ms(0.005556, 0.37, false), 0.005556);
  EXPECT_DOUBLE_EQ(device_run_ms(0.005556, 0.37, true), 0.37);
  EXPECT_DOUBLE_EQ(device_run_ms(0.5, 0.01, true), 0.5);  // device-bound: the device's time
  for (bool plain : {false, true}) {
    CandidateFigures graph, legacy;
    graph.tactic = "cudnn_graph";  // first in the preference order
    legacy.tactic = "cudnn_nhwc";
    for (double jitter : {1.0, 1.01, 0.995, 1.012}) {
      graph.rounds_ms.push_back(device_run_ms(0.005845 * jitter, 0.011, plain));
      legacy.rounds_ms.push_back(device_run_ms(0.005556 * jitter, 0.37, plain));
    }
    TacticChoice c = choose_tactic({graph, legacy}, TimingConditions{});
    EXPECT_EQ(c.tactic, plain ? "cudnn_graph" : "cudnn_nhwc") << (plain ? "plain" : "graph replay");
  }
}

}  // namespace
}  // namespace kiln::engine
