// The reduced-precision policy (kiln/engine/precision_policy.h) on the test backend (cpu by default), fp16
// builds of small networks that an all-fp16 plan gets wrong (on cuda in the ctest kiln_engine_gpu_tests): a
// mean of squares of values near 300 (each square passes fp16's 65504: inf in fp16, finite with the square
// and the reduction kept in fp32), and a softmax over a mask filled with -3.4e38 (finfo(float32).min, -inf in
// fp16: a fully masked row gives NaN; clamped to -65504 it is uniform, as eager fp16 gives with
// finfo(float16).min). Tolerance: 1e-2 relative to the largest magnitude, the harness's reduced-precision
// bound (inputs rounded to fp16's 11 significant bits). Also: the notes name the layers and rules; fp32 and
// bf16 builds (bf16 has fp32's range) depart from nothing.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/core/precision_probe.h"
#include "engine/engine_test_util.h"
#include "kiln/engine/precision_policy.h"

namespace kiln::engine {
namespace {

using passes::storage_loss;
using testing::build;
using testing::run;

BuilderConfig config_for(Precision p) {
  BuilderConfig config;
  config.backend = testing::test_backend();
  config.precisions = {Precision::FP32};
  if (p != Precision::FP32) config.precisions.push_back(p);
  return config;
}

// Skips the test when the backend under test cannot be created here (cuda without a GPU).
#define KILN_REQUIRE_TEST_BACKEND()                                        \
  std::string why_unavailable;                                             \
  if (testing::test_backend() != "cpu" &&                                  \
      !testing::shared_backend(testing::test_backend(), &why_unavailable)) \
  GTEST_SKIP() << why_unavailable

bool noted(const std::shared_ptr<Plan>& plan, const std::string& layer, const std::string& words) {
  for (const PrecisionNote& n : precision_notes(*plan)) {
    if (n.layer == layer && n.reason.find(words) != std::string::npos) return true;
  }
  return false;
}

std::string all_notes(const std::shared_ptr<Plan>& plan) {
  std::string s;
  for (const PrecisionNote& n : precision_notes(*plan)) s += n.layer + ": " + n.reason + "\n";
  return s;
}

// sqrt(mean(x * x, dim 1)) of x in [250, 300): a root mean square near 275.
std::shared_ptr<Plan> rms_plan(Precision p) {
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {4, 64});
  Tensor* sq = net.add_elementwise("square", x, x, ElementwiseOp::Mul);
  Tensor* mean = net.add_reduce("mean", sq, ReduceOp::Mean, {1}, true);
  Tensor* y = net.add_unary("root", mean, UnaryOp::Sqrt);
  y->set_name("y");
  net.mark_output(y);
  return build(net, config_for(p));
}

TEST(PrecisionPolicy, SumOfSquaresStaysInFp32AndFinite) {
  KILN_REQUIRE_TEST_BACKEND();
  std::mt19937 rng(7);
  HostTensor x = testing::random_tensor(DType::Float32, {4, 64}, rng, 250.0, 300.0);
  auto plan = rms_plan(Precision::FP16);
  EXPECT_TRUE(noted(plan, "square", "feeding reduction 'mean'")) << all_notes(plan);
  EXPECT_TRUE(noted(plan, "mean", "fp32")) << all_notes(plan);
  const HostTensor y = run(plan, {{"x", x}})[0];
  for (int64_t r = 0; r < 4; ++r) {
    double want = 0;
    for (int64_t c = 0; c < 64; ++c) want += x.get_as_double(r * 64 + c) * x.get_as_double(r * 64 + c);
    want = std::sqrt(want / 64);
    ASSERT_TRUE(std::isfinite(y.get_as_double(r))) << "row " << r;
    EXPECT_NEAR(y.get_as_double(r), want, 1e-2 * want) << "row " << r;
  }
}

TEST(PrecisionPolicy, Fp32AndBf16BuildsDepartFromNothing) {
  KILN_REQUIRE_TEST_BACKEND();
  EXPECT_TRUE(precision_notes(*rms_plan(Precision::FP32)).empty());
  auto bf16 = rms_plan(Precision::BF16);
  EXPECT_TRUE(precision_notes(*bf16).empty()) << all_notes(bf16);
}

TEST(PrecisionPolicy, PlainSumKeepsItsResultInFp32) {
  KILN_REQUIRE_TEST_BACKEND();
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 512});
  Tensor* s = net.add_reduce("total", x, ReduceOp::Sum, {1}, false);
  s->set_name("s");
  net.mark_output(s);
  auto plan = build(net, config_for(Precision::FP16));
  EXPECT_TRUE(noted(plan, "total", "can pass fp16's 65504")) << all_notes(plan);
  // 512 values near 200: a sum near 1e5, beyond fp16.
  std::mt19937 rng(3);
  HostTensor x_in = testing::random_tensor(DType::Float32, {2, 512}, rng, 180.0, 220.0);
  const HostTensor got = run(plan, {{"x", x_in}})[0];
  for (int64_t r = 0; r < 2; ++r) {
    double want = 0;
    for (int64_t c = 0; c < 512; ++c) want += x_in.get_as_double(r * 512 + c);
    EXPECT_NEAR(got.get_as_double(r), want, 1e-2 * want) << "row " << r;
  }
}

// where(mask, finfo(float32).min, x) -> softmax: row 0 fully masked, row 1 partly.
TEST(PrecisionPolicy, Float32MinFillClampsToFp16RangeAndSoftmaxStaysFinite) {
  KILN_REQUIRE_TEST_BACKEND();
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 8});
  Tensor* mask = net.add_input("mask", DType::Bool, {2, 8});
  Tensor* fill = net.add_constant("fill", Weights(HostTensor::from_floats({-3.4028234663852886e38f}, {1})));
  Tensor* masked = net.add_select("masked", mask, fill, x);
  Tensor* y = net.add_softmax("softmax", masked, 1);
  y->set_name("y");
  net.mark_output(y);
  auto plan = build(net, config_for(Precision::FP16));
  bool clamped = false;
  for (const PrecisionNote& n : precision_notes(*plan))
    clamped = clamped || n.reason.find("clamped") != std::string::npos;
  EXPECT_TRUE(clamped) << all_notes(plan);
  std::mt19937 rng(11);
  HostTensor x_in = testing::random_tensor(DType::Float32, {2, 8}, rng, -2.0, 2.0);
  HostTensor m(DType::Bool, {2, 8});
  for (int64_t i = 0; i < 16; ++i) m.set_from_double(i, i < 8 || i % 3 == 0 ? 1.0 : 0.0);
  const HostTensor got = run(plan, {{"x", x_in}, {"mask", m}})[0];
  for (int64_t c = 0; c < 8; ++c) EXPECT_NEAR(got.get_as_double(c), 1.0 / 8, 1e-2) << "masked row, col " << c;
  double denom = 0;
  for (int64_t c = 0; c < 8; ++c) {
    if (m.get_as_double(8 + c) == 0.0) denom += std::exp(x_in.get_as_double(8 + c));
  }
  for (int64_t c = 0; c < 8; ++c) {
    const double want = m.get_as_double(8 + c) != 0.0 ? 0.0 : std::exp(x_in.get_as_double(8 + c)) / denom;
    EXPECT_NEAR(got.get_as_double(8 + c), want, 1e-2) << "partly masked row, col " << c;
  }
}

// softmax(x @ W) * 2 with x in [1, 2) and W near `scale`: with scale 1e4 the logits (8 terms near 1.5e4) pass
// fp16's 65504 (inf in fp16: the softmax gives NaN), which the softmax brings back into [0, 1].
std::shared_ptr<Plan> logits_plan(double scale, BuilderConfig config) {
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 8});
  std::vector<float> w(8 * 16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(scale + 0.1 * static_cast<double>(i % 16));
  Tensor* weight = net.add_constant("w", Weights(HostTensor::from_floats(w, {8, 16})));
  Tensor* logits = net.add_matrix_multiply("logits", x, false, weight, false);
  Tensor* probs = net.add_softmax("probs", logits, 1);
  Tensor* two = net.add_constant("two", Weights(HostTensor::from_floats({2.0f}, {1, 1})));
  Tensor* y = net.add_elementwise("scaled", probs, two, ElementwiseOp::Mul);
  y->set_name("y");
  net.mark_output(y);
  config.timing_iterations = 0;  // the first tactic: builds compare byte for byte
  return build(net, config);
}

HostTensor logits_input() {
  std::mt19937 rng(5);
  return testing::random_tensor(DType::Float32, {2, 8}, rng, 1.0, 2.0);
}

// Tolerance 1e-3 absolute on outputs in [0, 2]: the layers that overflowed run in fp32 after the check, so
// only fp16's rounding of a value near 1 (4.9e-4 relative) separates the two.
TEST(PrecisionPolicy, SampleInputsRebuildTheFirstOverflowingLayersInFp32) {
  KILN_REQUIRE_TEST_BACKEND();
  const HostTensor x = logits_input();
  const HostTensor want = run(logits_plan(1e4, config_for(Precision::FP32)), {{"x", x}})[0];
  for (int64_t i = 0; i < want.numel(); ++i) ASSERT_TRUE(std::isfinite(want.get_as_double(i))) << i;

  const HostTensor before = run(logits_plan(1e4, config_for(Precision::FP16)), {{"x", x}})[0];
  EXPECT_FALSE(std::isfinite(before.get_as_double(0))) << "without sample inputs the fp16 logits overflow";

  BuilderConfig config = config_for(Precision::FP16);
  config.sample_inputs = {{{"x", x}}};
  auto plan = logits_plan(1e4, config);
  // The matmul overflows first; kept in fp32, its output cast down for the softmax overflows next. The
  // scaling after the softmax only read non-finite values: it stays fp16.
  EXPECT_TRUE(noted(plan, "logits", "non-finite on sample input 0 in")) << all_notes(plan);
  EXPECT_TRUE(noted(plan, "probs", "non-finite on sample input 0 in")) << all_notes(plan);
  EXPECT_FALSE(noted(plan, "scaled", "non-finite")) << all_notes(plan);
  const HostTensor got = run(plan, {{"x", x}})[0];
  for (int64_t i = 0; i < want.numel(); ++i)
    EXPECT_NEAR(got.get_as_double(i), want.get_as_double(i), 1e-3) << i;
}

TEST(PrecisionPolicy, SampleInputsThatNothingOverflowsLeaveThePlanAsItWas) {
  KILN_REQUIRE_TEST_BACKEND();
  BuilderConfig config = config_for(Precision::FP16);
  auto plain = logits_plan(1.0, config);
  config.sample_inputs = {{{"x", logits_input()}}};
  auto checked = logits_plan(1.0, config);
  EXPECT_EQ(all_notes(checked), all_notes(plain));
  EXPECT_EQ(checked->serialize(), plain->serialize());
}

// A sample that does not fit the network (no array for its input) costs the check, not the build.
TEST(PrecisionPolicy, SampleInputsThatDoNotFitLeaveThePlanAsItWas) {
  KILN_REQUIRE_TEST_BACKEND();
  BuilderConfig config = config_for(Precision::FP16);
  auto plain = logits_plan(1e4, config);
  config.sample_inputs = {{{"not_x", logits_input()}}};
  auto checked = logits_plan(1e4, config);
  EXPECT_EQ(checked->serialize(), plain->serialize());
}

// (x * 1e-6) @ W * 1e4 with x in [1, 2) and W in [0.5, 1): the first two results (1e-6 to 2e-5) lie below
// fp16's smallest normal (6.1e-5), where fp16 keeps a few bits of them, and the last scales them back to
// ~0.1.
std::shared_ptr<Plan> small_values_plan(BuilderConfig config) {
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 8});
  Tensor* tiny = net.add_constant("tiny", Weights(HostTensor::from_floats({1e-6f}, {1, 1})));
  Tensor* shrunk = net.add_elementwise("shrink", x, tiny, ElementwiseOp::Mul);
  std::vector<float> w(8 * 16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f + 0.03f * static_cast<float>(i % 16);
  Tensor* weight = net.add_constant("w", Weights(HostTensor::from_floats(w, {8, 16})));
  Tensor* mixed = net.add_matrix_multiply("mix", shrunk, false, weight, false);
  Tensor* big = net.add_constant("big", Weights(HostTensor::from_floats({1e4f}, {1, 1})));
  Tensor* y = net.add_elementwise("grow", mixed, big, ElementwiseOp::Mul);
  y->set_name("y");
  net.mark_output(y);
  config.timing_iterations = 0;
  return build(net, config);
}

double worst_relative_error(const HostTensor& got, const HostTensor& want) {
  double worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i)
    worst = std::max(
        worst, std::abs(got.get_as_double(i) - want.get_as_double(i)) / std::abs(want.get_as_double(i)));
  return worst;
}

// Tolerances: fp16 holds values near 1e-6 to 1/16 of their size (subnormal step 6e-8), so without the check
// the output is off by more than 1%; with it the small layers run in fp32 and only fp16's rounding of the
// ~0.1 outputs (4.9e-4 relative) and of x is left: 2e-3.
TEST(PrecisionPolicy, SampleInputsKeepValuesBelowFp16sRangeInFp32) {
  KILN_REQUIRE_TEST_BACKEND();
  const HostTensor x = logits_input();
  const HostTensor want = run(small_values_plan(config_for(Precision::FP32)), {{"x", x}})[0];
  const HostTensor before = run(small_values_plan(config_for(Precision::FP16)), {{"x", x}})[0];
  EXPECT_GT(worst_relative_error(before, want), 1e-2) << "without sample inputs fp16 loses the small values";

  BuilderConfig config = config_for(Precision::FP16);
  config.sample_inputs = {{{"x", x}}};
  auto plan = small_values_plan(config);
  EXPECT_TRUE(noted(plan, "shrink", "below fp16's range on sample input 0")) << all_notes(plan);
  EXPECT_TRUE(noted(plan, "mix", "fp16's range on sample input 0")) << all_notes(plan);
  EXPECT_LT(worst_relative_error(run(plan, {{"x", x}})[0], want), 2e-3) << all_notes(plan);
}

// ((x @ I + 2048) @ I) - 2048 with x in [1, 2): the second product reads 2048 + x as stored, which fp16 holds to a
// step of 2, so the subtraction returns 0 or 2 where x was, and the fp16 output is far from fp32's though every
// value is in fp16's range. (Without the second product the add and the subtraction fuse into one program that
// computes in float.)
std::shared_ptr<Plan> cancellation_plan(BuilderConfig config, float offset_value = 2048.0f) {
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2, 8});
  std::vector<float> eye(64, 0.0f);
  for (int i = 0; i < 8; ++i) eye[static_cast<size_t>(i * 9)] = 1.0f;
  Tensor* identity = net.add_constant("eye", Weights(HostTensor::from_floats(eye, {8, 8})));
  Tensor* copied = net.add_matrix_multiply("copy", x, false, identity, false);
  Tensor* offset = net.add_constant("offset", Weights(HostTensor::from_floats({offset_value}, {1, 1})));
  Tensor* shifted = net.add_elementwise("shift", copied, offset, ElementwiseOp::Add);
  Tensor* again = net.add_matrix_multiply("copy_again", shifted, false, identity, false);
  Tensor* y = net.add_elementwise("unshift", again, offset, ElementwiseOp::Sub);
  y->set_name("y");
  net.mark_output(y);
  config.timing_iterations = 0;
  return build(net, config);
}

// Tolerance: with the layers kept in fp32 only x's own rounding to fp16 at the input (4.9e-4 relative) remains;
// 2e-3 relative. Without the accuracy rule the output is off by up to 100%.
TEST(PrecisionPolicy, SampleInputsKeepTheEarliestLayersInFp32UntilTheOutputsAreAccurate) {
  KILN_REQUIRE_TEST_BACKEND();
  const HostTensor x = logits_input();
  const HostTensor want = run(cancellation_plan(config_for(Precision::FP32)), {{"x", x}})[0];
  const HostTensor before = run(cancellation_plan(config_for(Precision::FP16)), {{"x", x}})[0];
  EXPECT_GT(worst_relative_error(before, want), 0.1) << "without sample inputs fp16 cancels x away";

  BuilderConfig config = config_for(Precision::FP16);
  config.sample_inputs = {{{"x", x}}};
  auto plan = cancellation_plan(config);
  EXPECT_TRUE(noted(plan, "copy", "for accuracy: the first")) << all_notes(plan);
  EXPECT_LT(worst_relative_error(run(plan, {{"x", x}})[0], want), 2e-3) << all_notes(plan);
}

double cosine(const HostTensor& a, const HostTensor& b) {
  double dot = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    dot += a.get_as_double(i) * b.get_as_double(i);
    aa += a.get_as_double(i) * a.get_as_double(i);
    bb += b.get_as_double(i) * b.get_as_double(i);
  }
  return dot / std::sqrt(aa * bb);
}

size_t kept_for_accuracy(const std::shared_ptr<Plan>& plan) {
  size_t n = 0;
  for (const PrecisionNote& note : precision_notes(*plan))
    n += note.reason.find("for accuracy") != std::string::npos;
  return n;
}

// The bar is BuilderConfig::min_output_cosine (the setting reduced_precision_min_cosine). With an offset of
// 64 fp16 holds 64 + x to a step of 1/16, so the fp16 output's cosine to fp32 is between the default bar
// (0.999) and a stricter one (0.99999): the default keeps nothing for accuracy, the stricter bar keeps the
// earliest layers, names itself in the reason, and brings the output to it.
TEST(PrecisionPolicy, AStricterAccuracyBarKeepsMoreLayersInFp32) {
  KILN_REQUIRE_TEST_BACKEND();
  const HostTensor x = logits_input();
  const HostTensor want = run(cancellation_plan(config_for(Precision::FP32), 64.0f), {{"x", x}})[0];
  const double fp16_cosine =
      cosine(run(cancellation_plan(config_for(Precision::FP16), 64.0f), {{"x", x}})[0], want);
  ASSERT_GT(fp16_cosine, 0.999);
  ASSERT_LT(fp16_cosine, 0.99999);

  BuilderConfig config = config_for(Precision::FP16);
  config.sample_inputs = {{{"x", x}}};
  EXPECT_EQ(config.min_output_cosine, 0.999);
  const auto lenient = cancellation_plan(config, 64.0f);
  EXPECT_EQ(kept_for_accuracy(lenient), 0u) << all_notes(lenient);

  config.min_output_cosine = 0.99999;
  const auto strict = cancellation_plan(config, 64.0f);
  EXPECT_GT(kept_for_accuracy(strict), 0u) << all_notes(strict);
  EXPECT_TRUE(noted(strict, "copy", "below 0.99999)")) << all_notes(strict);
  EXPECT_GE(cosine(run(strict, {{"x", x}})[0], want), 0.99999) << all_notes(strict);

  config.min_output_cosine = 1.5;
  EXPECT_THROW(cancellation_plan(config, 64.0f), Error);
}

TEST(PrecisionPolicy, OutputCosineIsTheWorstOverSamplesAndOutputs) {
  auto values = [](std::vector<float> y, std::vector<float> z) {
    return passes::ProbeValues{{"y", HostTensor::from_floats(y, {2})}, {"z", HostTensor::from_floats(z, {2})}};
  };
  const std::vector<passes::ProbeValues> high = {values({1, 0}, {0, 0}), values({1, 1}, {3, 4})};
  EXPECT_DOUBLE_EQ(passes::output_cosine(high, high, {"y", "z"}), 1.0);
  const std::vector<passes::ProbeValues> low = {values({1, 0}, {0, 0}), values({1, 1}, {4, 3})};
  EXPECT_NEAR(passes::output_cosine(low, high, {"y", "z"}), 24.0 / 25.0, 1e-12);
  EXPECT_DOUBLE_EQ(passes::output_cosine(low, high, {"y"}), 1.0) << "only the outputs named";
  const std::vector<passes::ProbeValues> zero = {values({1, 0}, {0, 0}), values({1, 1}, {0, 0})};
  EXPECT_DOUBLE_EQ(passes::output_cosine(zero, high, {"z"}), 0.0) << "all zero where fp32 is not";
  const std::vector<passes::ProbeValues> inf = {values({1, 0}, {0, 0}), values({1, INFINITY}, {3, 4})};
  EXPECT_TRUE(std::isnan(passes::output_cosine(inf, high, {"y"})));
}

TEST(PrecisionPolicy, StorageLossIsFp16sRoundingInItsRangeAndAllOfItBelow) {
  const HostTensor normal = HostTensor::from_floats({1.0f, -3.3333f, 1000.1f, 0.07f}, {4});
  EXPECT_LE(storage_loss(normal, DType::Float16), std::ldexp(1.0, -11));
  EXPECT_EQ(storage_loss(HostTensor::from_floats({0.0f, 0.0f}, {2}), DType::Float16), 0.0);
  EXPECT_NEAR(storage_loss(HostTensor::from_floats({1e-9f, -2e-9f}, {2}), DType::Float16), 1.0, 1e-12)
      << "below half fp16's smallest subnormal: all of it rounds to zero";
  EXPECT_LT(storage_loss(HostTensor::from_floats({1e-9f, -2e-9f}, {2}), DType::BFloat16), std::ldexp(1.0, -8))
      << "bf16 has fp32's range";
  EXPECT_LE(storage_loss(HostTensor::from_floats({1e6f, 1.0f}, {2}), DType::Float16), std::ldexp(1.0, -11))
      << "values beyond fp16's range are the overflow check's";
}

}  // namespace
}  // namespace kiln::engine
