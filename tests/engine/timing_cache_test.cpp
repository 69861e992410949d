// Timing-cache entries (kiln/engine/timing_cache.h): their text, which are trusted, and what a build does
// with them: trusted entries are reused, uncertain or close ones are timed again and rewritten; reference
// kernels are never timed against optimized ones.

#include "kiln/engine/timing_cache.h"

#include <cstdio>

#include "engine/core/timing_cache.h"

#include "engine_test_util.h"
#include "kiln/engine/plan.h"
#include "kiln/engine/tactic_stats.h"

namespace kiln::engine {
namespace {
using namespace testing;

TEST(TimingCacheEntry, TextRoundTrips) {
  TimingEntry e;
  e.tactic = "onednn_blocked";
  e.margin = -0.0237;
  e.spread = 0.0412;
  e.cpu_share = 0.968;
  e.close = true;
  e.noisy = true;
  e.agreements = 3;
  e.timed_at = 1790000000;
  const std::string text = format_timing_entry(e);
  EXPECT_EQ(text,
            "onednn_blocked margin=-0.0237 spread=0.0412 cpu=0.968 agree=3 at=1790000000 flags=close,noisy");
  auto back = parse_timing_entry(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->tactic, e.tactic);
  EXPECT_DOUBLE_EQ(back->margin, e.margin);  // printed with 4 decimals, the values above have no more
  EXPECT_DOUBLE_EQ(back->spread, e.spread);
  EXPECT_DOUBLE_EQ(back->cpu_share, e.cpu_share);
  EXPECT_TRUE(back->close);
  EXPECT_FALSE(back->loaded);
  EXPECT_TRUE(back->noisy);
  EXPECT_EQ(back->agreements, 3);
  EXPECT_EQ(back->timed_at, 1790000000);
}

TEST(TimingCacheEntry, OldOrDamagedTextIsNoEntry) {
  EXPECT_FALSE(parse_timing_entry("onednn").has_value());  // the format before margins: timed again
  EXPECT_FALSE(parse_timing_entry("").has_value());
  EXPECT_FALSE(parse_timing_entry("onednn margin=x spread=0 cpu=1 agree=1").has_value());
  EXPECT_FALSE(parse_timing_entry("onednn margin=0.1 spread=0 cpu=1").has_value());
  EXPECT_FALSE(parse_timing_entry("margin=0.1 spread=0 cpu=1 agree=1").has_value());
  EXPECT_FALSE(parse_timing_entry("onednn margin=0.1 junk spread=0 cpu=1 agree=1").has_value());
  // Fields of a later version are ignored.
  EXPECT_TRUE(parse_timing_entry("onednn margin=0.1 spread=0 cpu=1 agree=1 future=7").has_value());
}

TEST(TimingCacheEntry, TrustNeedsCalmFiguresAndTwoAgreeingCloseCalls) {
  TimingEntry e;
  e.tactic = "onednn";
  e.agreements = 1;
  EXPECT_TRUE(timing_entry_trusted(e));
  e.loaded = true;
  EXPECT_FALSE(timing_entry_trusted(e));
  e.loaded = false;
  e.noisy = true;
  EXPECT_FALSE(timing_entry_trusted(e));
  e.noisy = false;
  e.cut_short = true;  // by the build's timing budget
  EXPECT_FALSE(timing_entry_trusted(e));
  EXPECT_EQ(parse_timing_entry(format_timing_entry(e))->cut_short, true);  // flag "short"
  e.cut_short = false;
  e.close = true;
  EXPECT_FALSE(timing_entry_trusted(e));  // a close call is re-timed once
  e.agreements = 2;
  EXPECT_TRUE(timing_entry_trusted(e));
  e.agreements = 0;
  e.close = false;
  EXPECT_FALSE(timing_entry_trusted(e));
}

/// A network with one convolution (two optimized CPU candidates: onednn_blocked and onednn) and one linear on
/// another input (one optimized candidate: onednn; its A is transposed, which onednn_1x1 does not take).
void add_conv_and_linear(Network& net, std::mt19937& rng) {
  Tensor* x = net.add_input("x", DType::Float32, {1, 16, 14, 14});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  net.mark_output(net.add_convolution(
      "conv", x, Weights("cw", random_tensor(DType::Float32, {16, 16, 3, 3}, rng)), Weights(), p));
  Tensor* v = net.add_input("v", DType::Float32, {64, 4});
  Tensor* w = net.add_constant("w", Weights("w", random_tensor(DType::Float32, {64, 32}, rng)));
  net.mark_output(net.add_matrix_multiply("linear", v, true, w, false));
}

void rewrite_cache(const std::string& path, const std::function<void(TimingEntry&)>& edit) {
  TimingCache cache(path);
  for (const TimingCacheRecord& r : read_timing_cache(path)) {
    ASSERT_TRUE(r.entry.has_value()) << r.text;
    TimingEntry e = *r.entry;
    edit(e);
    cache.put(r.key, format_timing_entry(e));
  }
  cache.save();
}

TEST(TimingCacheBuild, TrustedEntriesAreReusedOthersRetimed) {
  std::mt19937 rng(83);
  Network net;
  add_conv_and_linear(net, rng);
  BuilderConfig config;
  config.timing_iterations = 1;  // raised to the minimum number of rounds by the builder
  config.timing_cache_path = ::testing::TempDir() + "/kiln_timing_cache_build_test.txt";
  std::remove(config.timing_cache_path.c_str());

  auto first = build(net, config);
  EXPECT_EQ(tactic_stats(*first).timed, 1);    // the convolution; the linear has one optimized candidate
  EXPECT_EQ(tactic_stats(*first).untimed, 1);  // the linear
  EXPECT_EQ(tactic_stats(*first).retimed, 0);
  EXPECT_EQ(tactic_stats(*first).from_cache, 0);
  EXPECT_EQ(tactic_of(*first, LayerKind::MatrixMultiply), "onednn");
  ASSERT_EQ(read_timing_cache(config.timing_cache_path).size(), 1u);

  // A trusted entry naming the other convolution tactic is taken as it is.
  const std::string other =
      tactic_of(*first, LayerKind::Convolution) == "onednn" ? "onednn_blocked" : "onednn";
  rewrite_cache(config.timing_cache_path, [&](TimingEntry& e) {
    e = TimingEntry{};
    e.tactic = other;
    e.margin = 0.5;
    e.agreements = 1;
  });
  auto cached = build(net, config);
  EXPECT_EQ(tactic_stats(*cached).from_cache, 1);
  EXPECT_EQ(tactic_stats(*cached).timed, 0);
  EXPECT_EQ(tactic_of(*cached, LayerKind::Convolution), other);

  // The same entry marked as timed on a loaded machine is timed again and rewritten.
  rewrite_cache(config.timing_cache_path, [](TimingEntry& e) { e.loaded = true; });
  auto retimed = build(net, config);
  EXPECT_EQ(tactic_stats(*retimed).from_cache, 0);
  EXPECT_EQ(tactic_stats(*retimed).timed, 1);
  EXPECT_EQ(tactic_stats(*retimed).retimed, 1);
  auto records = read_timing_cache(config.timing_cache_path);
  ASSERT_EQ(records.size(), 1u);
  ASSERT_TRUE(records[0].entry.has_value());
  EXPECT_GT(records[0].entry->timed_at, 0);
  // A close call on one timing is not trusted yet: agreements count calm timings only.
  if (records[0].entry->loaded || records[0].entry->noisy) EXPECT_EQ(records[0].entry->agreements, 0);
  std::remove(config.timing_cache_path.c_str());
}

// Two convolutions of the same signature on the same input, built with no timing-cache file (kiln compile
// --no-cache): the second takes the choice the first just made, even an uncertain or close one (timing it
// again in the same build would only cost time and let identical layers differ on noise). That is a reuse
// within the build, not a choice from the timing cache. `kiln compile --no-cache` used to report such layers
// "from the timing cache" (or "re-timed"), and later timed them again where the first choice was close.
TEST(TimingCacheBuild, ALayerLikeAnEarlierOneOfTheBuildReusesItsTimingNotTheCache) {
  std::mt19937 rng(85);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, 16, 14, 14});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  for (const char* name : {"conv_a", "conv_b"}) {
    net.mark_output(net.add_convolution(
        name, x, Weights(std::string(name) + "_w", random_tensor(DType::Float32, {16, 16, 3, 3}, rng)),
        Weights(), p));
  }
  BuilderConfig config;
  config.timing_iterations = 1;
  config.timing_cache_path = "";
  auto plan = build(net, config);
  const TacticStats& stats = tactic_stats(*plan);
  EXPECT_EQ(stats.from_cache, 0);
  EXPECT_EQ(stats.retimed, 0);
  EXPECT_EQ(stats.timed, 1);  // the first convolution
  EXPECT_EQ(stats.reused, 1);
  std::map<std::string, std::string> tactic;
  for (const PlanLayerInfo& l : plan->layers()) tactic[l.name] = l.tactic;
  EXPECT_EQ(tactic["conv_a"], tactic["conv_b"]);
}

TEST(TimingCacheBuild, ReferenceKernelsAreNeverTimedAgainstOptimizedOnes) {
  // Two threads, tests running side by side: whatever the load, the convolution and the linear take oneDNN
  // tactics, because "ref" is only the fallback.
  std::mt19937 rng(84);
  Network net;
  add_conv_and_linear(net, rng);
  BuilderConfig config;
  config.threads = 2;
  for (int round = 0; round < 2; ++round) {
    auto plan = build(net, config);
    EXPECT_NE(tactic_of(*plan, LayerKind::Convolution), "ref");
    EXPECT_EQ(tactic_of(*plan, LayerKind::MatrixMultiply), "onednn");
    EXPECT_EQ(tactic_stats(*plan).reference, 0);
  }
}

TEST(TimingCacheBuild, ReferenceKernelIsTheFallback) {
  // An fp16 matrix multiply, strongly typed: the oneDNN kernels take fp32 only, so the reference kernel runs
  // it, untimed.
  Network net;
  Tensor* a = net.add_input("a", DType::Float16, {3, 4});
  Tensor* b = net.add_input("b", DType::Float16, {4, 5});
  net.mark_output(net.add_matrix_multiply("mm", a, false, b, false));
  BuilderConfig config;
  config.strongly_typed = true;
  auto plan = build(net, config);
  EXPECT_EQ(tactic_of(*plan, LayerKind::MatrixMultiply), "ref");
  EXPECT_EQ(tactic_stats(*plan).reference, 1);
  EXPECT_EQ(tactic_stats(*plan).timed, 0);
}

}  // namespace
}  // namespace kiln::engine
