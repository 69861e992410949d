// INT8: the calibrators on known histograms, per-channel weight quantization, and INT8 convolution engines
// (calibrated, built, serialized) against the fp32 build of the same network.

#include <cmath>

#include "engine/ops/quantize.h"
#include "engine_test_util.h"
#include "kiln/engine/calibration.h"
#include "kiln/engine/refitter.h"
#include "kiln/engine/tactic_stats.h"
#include "sqnr.h"

namespace kiln::engine {
namespace {
using namespace testing;
using kiln::testing::sqnr_db;

Histogram histogram(float max_abs, std::vector<double> counts, float min = 0.0f) {
  Histogram h;
  h.max_abs = max_abs;
  h.min = min;
  h.max = max_abs;
  h.counts = std::move(counts);
  return h;
}

TEST(Calibrators, MaxTakesTheLargestMagnitude) {
  CalibrationConfig c;
  c.calibrator = CalibratorKind::Max;
  EXPECT_EQ(calibrated_amax(histogram(7.5f, std::vector<double>(2048, 1.0)), c), 7.5f);
}

TEST(Calibrators, PercentileCutsTheTail) {
  // 100 bins of width 1, one value each: the 50th percentile ends at bin 49's upper edge (50), 99.99 at 100.
  CalibrationConfig c;
  c.calibrator = CalibratorKind::Percentile;
  c.percentile = 50;
  EXPECT_FLOAT_EQ(calibrated_amax(histogram(100.0f, std::vector<double>(100, 1.0)), c), 50.0f);
  c.percentile = 99.99;
  EXPECT_FLOAT_EQ(calibrated_amax(histogram(100.0f, std::vector<double>(100, 1.0)), c), 100.0f);
}

TEST(Calibrators, EntropyClipsARareOutlierAndKeepsAUniformRange) {
  CalibrationConfig c;
  c.calibrator = CalibratorKind::Entropy;
  // 2048 bins over [0, 100]: a million values within [0, 2] (the first 41 bins, decaying) and one at 100.
  // Keeping the outlier would leave the bulk 2-3 of 127 steps; the divergence is lowest with the clip near
  // the bulk.
  std::vector<double> counts(2048, 0.0);
  for (int b = 0; b < 41; ++b) counts[b] = 50000.0 * std::exp(-b / 10.0);
  counts[2047] = 1;
  const float clipped = calibrated_amax(histogram(100.0f, counts, -100.0f), c);
  EXPECT_GT(clipped, 1.0f);
  EXPECT_LT(clipped, 10.0f);
  // A uniform distribution has no tail to cut: the clip stays near the whole range; so it does for a ReLU's
  // (never negative, half its values exactly 0: a spike in the first bin, which must not pull the clip down).
  EXPECT_GT(calibrated_amax(histogram(100.0f, std::vector<double>(2048, 10.0), -100.0f), c), 90.0f);
  std::vector<double> relu(2048, 10.0);
  relu[0] = 2048 * 10.0;
  EXPECT_GT(calibrated_amax(histogram(100.0f, relu), c), 90.0f);
}

TEST(Calibrators, NamesParseAndUnknownOnesAreInvalidInput) {
  EXPECT_EQ(parse_calibrator("entropy"), CalibratorKind::Entropy);
  EXPECT_EQ(parse_calibrator("max"), CalibratorKind::Max);
  EXPECT_EQ(parse_calibrator("percentile"), CalibratorKind::Percentile);
  try {
    parse_calibrator("minmax");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
  }
}

TEST(Int8Quantization, PerChannelScalesAndRounding) {
  // Conv-style [channels=3, inner=3]: per channel max |w| / 127; an all-zero channel gets scale 1.
  const ops::QuantizedWeights q =
      ops::quantize_per_channel({1.0f, -2.0f, 0.5f, 0.0f, 0.0f, 0.0f, 0.1f, 0.2f, -0.4f}, 1, 3, 3);
  ASSERT_EQ(q.scales.size(), 3u);
  EXPECT_FLOAT_EQ(q.scales[0], 2.0f / 127);
  EXPECT_FLOAT_EQ(q.scales[1], 1.0f);
  EXPECT_FLOAT_EQ(q.scales[2], 0.4f / 127);
  // 1 / (2/127) = 63.5 rounds away from zero to 64; -2 is the channel's -127; 0.5 -> 31.75 -> 32.
  EXPECT_EQ(std::vector<int>(q.values.begin(), q.values.end()),
            (std::vector<int>{64, -127, 32, 0, 0, 0, 32, 64, -127}));
  // Matmul-style b [K=2, N=2]: channels are the columns.
  const ops::QuantizedWeights m = ops::quantize_per_channel({1.0f, 4.0f, -0.5f, 2.0f}, 2, 2, 1);
  EXPECT_FLOAT_EQ(m.scales[0], 1.0f / 127);
  EXPECT_FLOAT_EQ(m.scales[1], 4.0f / 127);
  EXPECT_EQ(std::vector<int>(m.values.begin(), m.values.end()), (std::vector<int>{127, 127, -64, 64}));
  EXPECT_EQ(ops::quantize_value(1000.0f, 1.0f, -127, 127), 127);
  EXPECT_EQ(ops::quantize_value(-3.5f, 1.0f, 0, 255), 0);
}

TEST(Int8Quantization, AMaxLevelBelow127NarrowsTheIntegers) {
  // 7-bit weights (the CPU backend without VNNI): scale = max |w| / 63, q in [-63, 63]. 0.75 / (2/63) =
  // 23.6 -> 24; 0.5 / (2/63) = 15.75 -> 16.
  const ops::QuantizedWeights q = ops::quantize_per_channel({0.75f, -2.0f, 0.5f}, 1, 1, 3, {}, 63);
  EXPECT_FLOAT_EQ(q.scales[0], 2.0f / 63);
  EXPECT_EQ(std::vector<int>(q.values.begin(), q.values.end()), (std::vector<int>{24, -63, 16}));
  // Given scales whose integers reach beyond [-64, 63] are not used: the weights are requantized.
  const ops::QuantizedWeights g =
      ops::quantize_per_channel({100 * 0.02f, -64 * 0.02f, 0.0f}, 1, 1, 3, {0.02f}, 63);
  EXPECT_FLOAT_EQ(g.scales[0], 2.0f / 63);
  const ops::QuantizedWeights fits =
      ops::quantize_per_channel({63 * 0.02f, -64 * 0.02f, 0.0f}, 1, 1, 3, {0.02f}, 63);
  EXPECT_EQ(std::vector<int>(fits.values.begin(), fits.values.end()), (std::vector<int>{63, -64, 0}));
  EXPECT_THROW(ops::quantize_per_channel({1.0f}, 1, 1, 1, {}, 128), Error);
}

TEST(Int8Quantization, GivenScalesThatReproduceTheWeightsAreUsed) {
  // Channel 0: q = {100, -50, 3} x 0.02 (max |q| 100: max |w| / 127 would give other integers); channel 1: q
  // =
  // {-128, 1, 0} x 0.5 (the program's -128 stays -128).
  const std::vector<float> w = {100 * 0.02f, -50 * 0.02f, 3 * 0.02f, -128 * 0.5f, 0.5f, 0.0f};
  const ops::QuantizedWeights q = ops::quantize_per_channel(w, 1, 2, 3, {0.02f, 0.5f});
  EXPECT_EQ(q.scales, (std::vector<float>{0.02f, 0.5f}));
  EXPECT_EQ(std::vector<int>(q.values.begin(), q.values.end()), (std::vector<int>{100, -50, 3, -128, 1, 0}));
  // Scales that do not reproduce the weights (0.3 is not an integer times 0.25), or of the wrong count, or
  // not positive: the computed ones.
  for (const std::vector<float>& bad :
       std::vector<std::vector<float>>{{0.25f, 0.5f}, {0.02f}, {0.02f, -0.5f}}) {
    const ops::QuantizedWeights c =
        ops::quantize_per_channel({0.3f, -1.0f, 0.0f, 2.0f, 0.5f, 0.0f}, 1, 2, 3, bad);
    EXPECT_FLOAT_EQ(c.scales[0], 1.0f / 127);
    EXPECT_FLOAT_EQ(c.scales[1], 2.0f / 127);
  }
}

// A convolution whose weights are int8 values times per-channel scales (a channel's max |q| below 127) and
// whose input lies on its quantization grid: with the scales given (Weights::int8_scales) the INT8 kernel
// computes with exactly those integers, so it equals the fp32 convolution up to fp32 rounding (the products
// are exact in s32; 2e-6 of the output's max allows the fp32 sums' rounding), also after the plan is
// serialized and loaded (plan format 7 keeps the scales). Without them the kernel requantizes the weights at
// max |w| / 127 and misses by up to half of that step per weight (measured 4.2e-3 of the max here).
// Tests of INT8 layers with a signed input or a program's weight scales need a CPU whose every INT8 product
// is exact (VNNI); elsewhere those layers stay fp32
// (CliQdq.WithoutExactInt8KernelsTheProgramsArithmeticRunsAndSaysWhy,
// Int8Engine.ExactInt8IsAPropertyOfTheCpuBackendOnThisMachine, OnednnInt8Exact.*). A layer with a u8 input
// and Kiln's own weights runs INT8 on every CPU (7-bit weights without VNNI).
#define REQUIRE_EXACT_INT8()                                                      \
  do {                                                                            \
    std::string why_not_exact;                                                    \
    if (!backend_runs_int8("cpu", &why_not_exact)) GTEST_SKIP() << why_not_exact; \
  } while (0)

TEST(Int8Engine, GivenWeightScalesReproduceTheProgramsIntegers) {
  REQUIRE_EXACT_INT8();
  std::mt19937 rng(2011);
  std::uniform_int_distribution<int> wq(-100, 100), xq(-127, 127);
  const int64_t o = 8, c = 16;
  const std::vector<float> scales = {0.011f, 0.02f, 0.0031f, 0.5f, 0.07f, 0.013f, 0.0009f, 0.2f};
  HostTensor k(DType::Float32, {o, c, 3, 3});
  for (int64_t i = 0; i < k.numel(); ++i)
    k.set_from_double(i, static_cast<float>(wq(rng)) * scales[static_cast<size_t>(i / (c * 9))]);
  const float sx = 0.037f;
  HostTensor x(DType::Float32, {1, c, 7, 6});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_from_double(i, static_cast<float>(xq(rng)) * sx);
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  auto make = [&](bool given) {
    Network net;
    Tensor* in = net.add_input("x", DType::Float32, {1, c, 7, 6});
    in->set_dynamic_range(-127 * sx, 127 * sx);
    Weights w("k", k);
    if (given) w.int8_scales = scales;
    Tensor* y = net.add_convolution("conv", in, w, Weights(), p);
    y->set_name("y");
    net.mark_output(y);
    BuilderConfig config;
    config.threads = 2;
    config.timing_iterations = 0;
    const auto fp32 = build(net, config);
    config.precisions = {Precision::FP32, Precision::INT8};
    config.int8_first_last = true;
    return std::make_pair(fp32, build(net, config));
  };
  const auto [fp32, given] = make(true);
  const auto computed = make(false).second;
  const auto reloaded = Plan::deserialize(given->serialize(), BackendOptions{2});
  const HostTensor want = run(fp32, {{"x", x}})[0];
  double amax = 0;
  for (int64_t i = 0; i < want.numel(); ++i) amax = std::max(amax, std::fabs(want.get_as_double(i)));
  auto worst = [&](const std::shared_ptr<Plan>& plan) {
    const HostTensor got = run(plan, {{"x", x}})[0];
    double e = 0;
    for (int64_t i = 0; i < want.numel(); ++i)
      e = std::max(e, std::fabs(got.get_as_double(i) - want.get_as_double(i)));
    return e / amax;
  };
  EXPECT_LE(worst(given), 2e-6);
  EXPECT_LE(worst(reloaded), 2e-6);
  EXPECT_GT(worst(computed), 1e-4) << "the computed scales should requantize these weights";
}

// x -> conv a -> relu = r -> conv b -> relu -> conv c + r -> relu: three INT8 convolutions (first and last
// allowed). r (read by conv b and, as its residual, by conv c) and conv b's output stay u8 between them; conv
// c writes the fp32 network output, so it dequantizes its u8 residual into its destination first.
struct ResidualNet {
  HostTensor ka, kb, kc, ba, bb, bc;
  ConvolutionParams p;
  static constexpr int64_t c = 16, h = 10, w = 9;
  explicit ResidualNet(std::mt19937& rng) {
    ka = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2);
    kb = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2);
    kc = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2);
    ba = random_tensor(DType::Float32, {c}, rng);
    bb = random_tensor(DType::Float32, {c}, rng);
    bc = random_tensor(DType::Float32, {c}, rng);
    p.pre_padding = p.post_padding = {1, 1};
  }
  void define(Network& net) const {
    Tensor* x = net.add_input("x", DType::Float32, {1, c, h, w});
    Tensor* r = net.add_activation("relu_a",
                                   net.add_convolution("conv_a", x, Weights("ka", ka), Weights("ba", ba), p),
                                   ActivationKind::Relu);
    Tensor* b = net.add_activation("relu_b",
                                   net.add_convolution("conv_b", r, Weights("kb", kb), Weights("bb", bb), p),
                                   ActivationKind::Relu);
    Tensor* y = net.add_convolution("conv_c", b, Weights("kc", kc), Weights("bc", bc), p);
    Tensor* out = net.add_activation("relu_c", net.add_elementwise("add", y, r, ElementwiseOp::Add),
                                     ActivationKind::Relu);
    out->set_name("y");
    net.mark_output(out);
  }
};

std::vector<std::map<std::string, HostTensor>> batches(std::mt19937& rng, int n) {
  std::vector<std::map<std::string, HostTensor>> out;
  for (int i = 0; i < n; ++i) out.push_back({{"x", random_tensor(DType::Float32, {1, 16, 10, 9}, rng)}});
  return out;
}

// The fp32 build of `net` and its INT8 build (first and last layers allowed) on ranges the max calibrator
// (no clipping: every error is a rounding error) computes on 4 batches.
struct Int8Builds {
  std::shared_ptr<Plan> fp32, int8;
  BuilderConfig int8_config;  // (to build the same network again)
};
// The builds with `config` (untimed unless it times) around the max calibrator's ranges.
Int8Builds build_fp32_and_int8_with(Network& net, std::mt19937& rng, BuilderConfig config) {
  CalibrationConfig calibration;
  calibration.calibrator = CalibratorKind::Max;
  Int8Builds out;
  out.fp32 = build(net, config);
  set_dynamic_ranges(net, calibrate(net, config, batches(rng, 4), calibration));
  config.precisions = {Precision::FP32, Precision::INT8};
  config.int8_first_last = true;
  out.int8 = build(net, config);
  out.int8_config = config;
  return out;
}

Int8Builds build_fp32_and_int8(Network& net, std::mt19937& rng, bool explicit_quantization = false,
                               bool refittable = false) {
  BuilderConfig config;
  config.threads = 2;
  config.timing_iterations = 0;  // untimed: the INT8 tactic (listed first) wherever it applies
  config.int8_explicit = explicit_quantization;
  config.refittable = refittable;
  return build_fp32_and_int8_with(net, rng, config);
}

// The INT8 build against the fp32 one on 3 held-out batches: SQNR above 30 dB (the tolerance derived in
// CalibratedResidualConvolutionsMatchFp32WithinTheQuantizationStep).
void expect_within_quantization_noise(const Int8Builds& b, std::mt19937& rng) {
  for (const auto& sample : batches(rng, 3))
    EXPECT_GT(sqnr_db(run(b.int8, sample)[0], run(b.fp32, sample)[0]), 30.0);
}

// The dtype each layer of `plan` writes (its first output), by layer name.
std::map<std::string, DType> written_dtypes(const Plan& plan) {
  std::map<std::string, DType> out;
  for (const PlanLayerInfo& l : plan.layers()) {
    if (!l.output_dtypes.empty()) out[l.name] = l.output_dtypes[0];
  }
  return out;
}

TEST(Int8Engine, CalibratedResidualConvolutionsMatchFp32WithinTheQuantizationStep) {
  std::mt19937 rng(2001);
  ResidualNet model(rng);
  Network net;
  model.define(net);
  BuilderConfig config;
  config.threads = 2;
  config.timing_iterations = 0;  // untimed: the INT8 tactic (listed first) wherever it applies
  CalibrationConfig calibration;
  calibration.calibrator = CalibratorKind::Max;  // no clipping: every error is a rounding error
  const auto ranges = calibrate(net, config, batches(rng, 4), calibration);
  ASSERT_TRUE(ranges.count("x") && ranges.count("y"));
  EXPECT_EQ(ranges.at("y").min, 0.0f);  // after a ReLU: unsigned
  EXPECT_LT(ranges.at("x").min, 0.0f);
  const auto fp32 = build(net, config);
  EXPECT_EQ(set_dynamic_ranges(net, ranges), static_cast<int>(ranges.size()));
  config.precisions = {Precision::FP32, Precision::INT8};
  config.int8_first_last = true;
  const auto int8 = build(net, config);
  int int8_layers = 0;
  std::map<std::string, DType> written;
  for (const PlanLayerInfo& l : int8->layers()) {
    int8_layers += l.int8 ? 1 : 0;
    if (!l.output_dtypes.empty()) written[l.name] = l.output_dtypes[0];
  }
  // (conv_a reads the signed x: quantized to u8 with a zero point on a CPU without VNNI)
  EXPECT_EQ(int8_layers, 3);
  EXPECT_EQ(written["conv_b"], DType::UInt8) << "read only by an INT8 layer: stays u8";
  EXPECT_EQ(written["conv_a"], DType::UInt8)
      << "read only by INT8 layers, as input and as residual: stays u8";

  // Held-out inputs. Each quantized tensor is off by at most half a step (amax/254 for s8, amax/510 for u8)
  // per element and the weights by half of theirs (1/254 of the channel's max; 1/126 with 7-bit weights,
  // without VNNI); through three layers of 144-term sums the relative errors add up
  // to about 1% of the output range on average: SQNR above 30 dB. A single element whose terms' errors happen
  // to align can be off by several times that (6.4% of the output's max measured here): no element off by
  // more than 10%.
  for (const auto& sample : batches(rng, 3)) {
    const HostTensor want = run(fp32, sample)[0];
    const HostTensor got = run(int8, sample)[0];
    double amax = 0, worst = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      amax = std::max(amax, std::fabs(want.get_as_double(i)));
      worst = std::max(worst, std::fabs(got.get_as_double(i) - want.get_as_double(i)));
    }
    EXPECT_GT(sqnr_db(got, want), 30.0);
    EXPECT_LE(worst, 0.10 * amax);
  }

  // The plan carries the ranges: a reloaded plan computes the same values without calibrating.
  const auto reloaded = Plan::deserialize(int8->serialize(), BackendOptions{2});
  const auto sample = batches(rng, 1)[0];
  const HostTensor a = run(int8, sample)[0], b = run(reloaded, sample)[0];
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
}

// Explicit quantization (ranges from a program's Q/DQ nodes, BuilderConfig::int8_explicit): the residual r of
// conv c stays fp32 (the program adds it unrounded), conv b's output, read only as conv c's input, stays u8.
TEST(Int8Engine, ExplicitQuantizationKeepsResidualsFp32) {
  std::mt19937 rng(2003);
  ResidualNet model(rng);
  Network net;
  model.define(net);
  const Int8Builds b = build_fp32_and_int8(net, rng, true);
  int int8_layers = 0;
  for (const PlanLayerInfo& l : b.int8->layers()) int8_layers += l.int8 ? 1 : 0;
  EXPECT_EQ(int8_layers, 3);  // (conv_a reads the signed x: u8 with a zero point on a CPU without VNNI)
  std::map<std::string, DType> written = written_dtypes(*b.int8);
  EXPECT_EQ(written["conv_a"], DType::Float32) << "read as a residual: stays fp32";
  EXPECT_EQ(written["conv_b"], DType::UInt8) << "read only as an INT8 layer's input: u8";
  expect_within_quantization_noise(b, rng);
}

// A timed INT8 build (each layer's INT8 candidate timed against the fp32 ones; one reading a tensor that will
// stay INT8 between INT8 layers is timed reading it in INT8: may_stay_int8). Which layers win depends on the
// machine, so the test asks only what holds whatever they are: the build succeeds, every tensor written in
// INT8 is read only by INT8 layers, the outputs stay within the quantization noise (30 dB, as above) and a
// reloaded plan computes the same bits.
TEST(Int8Engine, ATimedBuildKeepsInt8TensorsBetweenInt8LayersOnly) {
  std::mt19937 rng(2017);
  ResidualNet model(rng);
  Network net;
  model.define(net);
  BuilderConfig config;
  config.threads = 2;
  config.timing_cache_path = "";  // timed now, whatever earlier builds chose
  const Int8Builds b = build_fp32_and_int8_with(net, rng, config);
  const auto& int8 = b.int8;
  std::map<std::string, const PlanLayerInfo*> by_output;
  const std::vector<PlanLayerInfo> layers = int8->layers();
  for (const PlanLayerInfo& l : layers) {
    for (const std::string& o : l.outputs) by_output[o] = &l;
  }
  int int8_layers = 0;
  for (const PlanLayerInfo& l : layers) {
    int8_layers += l.int8 ? 1 : 0;
    for (const std::string& in : l.inputs) {
      const auto p = by_output.find(in);
      if (p == by_output.end() || p->second->output_dtypes.empty()) continue;
      const DType dt = p->second->output_dtypes[0];
      if (dt == DType::UInt8 || dt == DType::Int8) {
        EXPECT_TRUE(l.int8) << l.name << " (" << l.tactic << ") reads INT8 " << in;
        EXPECT_TRUE(p->second->int8) << p->second->name << " writes INT8 without an INT8 tactic";
      }
    }
  }
  expect_within_quantization_noise(b, rng);
  const auto reloaded = Plan::deserialize(int8->serialize(), BackendOptions{2});
  const auto sample = batches(rng, 1)[0];
  const HostTensor x = run(int8, sample)[0], y = run(reloaded, sample)[0];
  ASSERT_EQ(x.nbytes(), y.nbytes());
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.nbytes()), 0);
  if (int8_layers == 0)
    GTEST_SKIP() << "timing kept every layer fp32 on this machine: no INT8 layer was checked";
}

// A timed build where an INT8 convolution without an activation (a signed output range) feeds another:
// may_stay_int8 has the reader's INT8 candidate read that tensor in INT8 (s8). The cpu backend without VNNI
// reads no s8 tensor, so there the candidate is timed quantizing the fp32 tensor itself (as it then runs, u8
// with a zero point) instead of being refused (it used to be: "onednn_int8=failed(... does not apply ...)" in
// the contest, and the layer stayed fp32 whatever INT8 would have gained). Which layers win is the machine's
// timing, so the test reads conv_b's contest line, and skips, saying so, when conv_a stayed fp32.
TEST(Int8Engine, AnInt8ReaderOfASignedInt8OutputIsTimedAsItWillRun) {
  std::mt19937 rng(2019);
  const Dims xd = {1, 64, 28, 28};
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, xd);
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* a = net.add_convolution(
      "conv_a", x, Weights("ka", random_tensor(DType::Float32, {64, 64, 3, 3}, rng, -0.05, 0.05)), Weights(),
      p);
  Tensor* y = net.add_convolution(
      "conv_b", a, Weights("kb", random_tensor(DType::Float32, {64, 64, 3, 3}, rng, -0.05, 0.05)), Weights(),
      p);
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config;
  config.threads = 2;
  config.timing_cache_path = "";
  std::vector<std::map<std::string, HostTensor>> data;
  for (int i = 0; i < 4; ++i) data.push_back({{"x", random_tensor(DType::Float32, xd, rng)}});
  CalibrationConfig calibration;
  calibration.calibrator = CalibratorKind::Max;
  const auto fp32 = build(net, config);
  set_dynamic_ranges(net, calibrate(net, config, data, calibration));
  ASSERT_LT(a->dynamic_range()->min, 0.0f);
  config.precisions = {Precision::FP32, Precision::INT8};
  config.int8_first_last = true;
  const LoggedBuild built = build_logged(net, config);
  const auto& int8 = built.plan;
  EXPECT_EQ(tactic_stats(*int8).failed, 0) << "an INT8 candidate failed to be made";
  std::map<std::string, bool> is_int8;
  for (const PlanLayerInfo& l : int8->layers()) is_int8[l.name] = l.int8;
  // "... timed: onednn_int8=0.58ms(...) ..." or "onednn_int8=failed(...)"
  const std::string contest = contest_line(built.log, "conv_b");
  if (is_int8["conv_a"]) {
    ASSERT_FALSE(contest.empty()) << "no contest line for conv_b in:\n" << built.log;
    EXPECT_NE(contest.find("onednn_int8="), std::string::npos) << contest;
    EXPECT_EQ(contest.find("onednn_int8=failed"), std::string::npos) << contest;
  }
  const std::map<std::string, DType> written = written_dtypes(*int8);
  if (written.at("conv_a") == DType::Int8) {
    EXPECT_TRUE(backend_runs_int8("cpu", nullptr)) << "an s8 tensor between layers without VNNI";
    EXPECT_TRUE(is_int8["conv_b"]);
  }
  const auto sample = data[0];
  EXPECT_GT(sqnr_db(run(int8, sample)[0], run(fp32, sample)[0]), 30.0);  // (as above)
  if (!is_int8["conv_a"]) GTEST_SKIP() << "timing kept conv_a fp32 on this machine: the reader was not timed";
}

// Signed inputs through Kiln's wiring (on a CPU without VNNI: u8 with zero point 128): a 3x3 convolution with
// a bias reading the signed x, a depthwise one with a bias reading its signed output, then a linear layer
// with a bias reading that, at two batch sizes of a dynamic batch (each shape makes its own primitives).
// Every layer runs INT8 and the output stays within the quantization noise of fp32 (30 dB, as above: about
// ten steps' worth of sums through three layers).
TEST(Int8Engine, SignedInputsWithBiasesDepthwiseAndTwoShapes) {
  std::mt19937 rng(2021);
  const int64_t c = 32, hw = 12;
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {-1, c, hw, hw});
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  Tensor* a = net.add_convolution("conv", x,
                                  Weights("k", random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.1, 0.1)),
                                  Weights("kb", random_tensor(DType::Float32, {c}, rng)), p);
  ConvolutionParams dw = p;
  dw.groups = c;
  Tensor* d = net.add_convolution("depthwise", a,
                                  Weights("dk", random_tensor(DType::Float32, {c, 1, 3, 3}, rng, -0.5, 0.5)),
                                  Weights("db", random_tensor(DType::Float32, {c}, rng)), dw);
  Tensor* f = net.add_shuffle("flatten", d, ShuffleParams{{}, true, {0, c * hw * hw}, {}});
  Tensor* w =
      net.add_constant("w", Weights("w", random_tensor(DType::Float32, {c * hw * hw, 10}, rng, -0.02, 0.02)));
  Tensor* y = net.add_matrix_multiply("linear", f, false, w, false);
  y->set_name("y");
  net.mark_output(y);
  BuilderConfig config;
  config.threads = 2;
  config.timing_iterations = 0;
  OptimizationProfile profile;
  profile.set_dimensions("x", {1, c, hw, hw}, {2, c, hw, hw}, {4, c, hw, hw});
  config.profiles = {profile};
  auto data = [&](int64_t n, int count) {
    std::vector<std::map<std::string, HostTensor>> out;
    for (int i = 0; i < count; ++i)
      out.push_back({{"x", random_tensor(DType::Float32, {n, c, hw, hw}, rng)}});
    return out;
  };
  CalibrationConfig calibration;
  calibration.calibrator = CalibratorKind::Max;
  const auto fp32 = build(net, config);
  set_dynamic_ranges(net, calibrate(net, config, data(2, 4), calibration));
  ASSERT_LT(a->dynamic_range()->min, 0.0f);
  ASSERT_LT(d->dynamic_range()->min, 0.0f);
  config.precisions = {Precision::FP32, Precision::INT8};
  config.int8_first_last = true;
  const auto int8 = build(net, config);
  std::vector<std::string> int8_layers;
  for (const PlanLayerInfo& l : int8->layers()) {
    if (l.int8) int8_layers.push_back(l.name);
  }
  EXPECT_EQ(int8_layers, (std::vector<std::string>{"conv", "depthwise", "linear"}));
  for (int64_t n : {1, 3}) {
    for (const auto& sample : data(n, 2)) {
      EXPECT_GT(sqnr_db(run(int8, sample)[0], run(fp32, sample)[0]), 30.0) << "batch " << n;
    }
  }
}

// Refit of an INT8 plan whose convolutions pass u8 tensors between them. Regression: the refitter re-ran
// shape inference on the stored (u8) input type and refused it ("input 0 must be floating point, got u8"), so
// `kiln refit` of such a module (a Q/DQ program's) failed. The refitted plan computes what a fresh build with
// the same weights and ranges computes, bit for bit.
TEST(Int8Engine, RefitOfAPlanWithInt8TensorsBetweenLayers) {
  std::mt19937 rng(2013);
  ResidualNet model(rng);
  Network net;
  model.define(net);
  const Int8Builds built = build_fp32_and_int8(net, rng, false, true);
  const auto& plan = built.int8;
  ASSERT_EQ(written_dtypes(*plan)["conv_b"], DType::UInt8);
  std::mt19937 rng2(2014);
  ResidualNet other(rng2);
  Refitter refitter(plan);
  refitter.set_weights("kb", other.kb);
  EXPECT_GE(refitter.refit(), 1);
  Network net2;
  ResidualNet mixed = model;
  mixed.kb = other.kb;
  mixed.define(net2);
  for (int64_t i = 0; i < net2.num_tensors(); ++i) {
    if (const auto& r = net.tensor(i)->dynamic_range()) net2.tensor(i)->set_dynamic_range(r->min, r->max);
  }
  const auto fresh = build(net2, built.int8_config);
  const auto sample = batches(rng, 1)[0];
  const HostTensor a = run(plan, sample)[0], b = run(fresh, sample)[0];
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
}

// x -> conv a + x -> relu -> conv b -> relu -> conv c: conv a adds the fp32 network input as its residual
// into its u8 output (quantized to s8 into the destination first: x is negative too).
TEST(Int8Engine, AnFp32ResidualIsQuantizedIntoAnInt8Output) {
  REQUIRE_EXACT_INT8();
  std::mt19937 rng(2005);
  ResidualNet m(rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, 16, 10, 9});
  Tensor* a = net.add_convolution("conv_a", x, Weights("ka", m.ka), Weights("ba", m.ba), m.p);
  a = net.add_activation("relu_a", net.add_elementwise("add", a, x, ElementwiseOp::Add),
                         ActivationKind::Relu);
  Tensor* h = net.add_activation(
      "relu_b", net.add_convolution("conv_b", a, Weights("kb", m.kb), Weights("bb", m.bb), m.p),
      ActivationKind::Relu);
  Tensor* y = net.add_convolution("conv_c", h, Weights("kc", m.kc), Weights("bc", m.bc), m.p);
  y->set_name("y");
  net.mark_output(y);
  const Int8Builds b = build_fp32_and_int8(net, rng);
  EXPECT_EQ(written_dtypes(*b.int8)["conv_a"], DType::UInt8);
  expect_within_quantization_noise(b, rng);
}

// x -> relu (fp32, a never-negative range) = r -> conv a + r -> relu -> conv b: conv a writes u8 and converts
// its fp32 residual r into its destination (u8, r's type). Regression: the copy was s8 at r's u8 step (amax /
// 255), so every residual value above amax / 2 was clipped to half the range (qdq_tiny_resnet's first block
// adds its max pool's output so).
TEST(Int8Engine, ANeverNegativeFp32ResidualIsNotClipped) {
  std::mt19937 rng(2007);
  ResidualNet m(rng);
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {1, 16, 10, 9});
  Tensor* r = net.add_activation("relu_x", x, ActivationKind::Relu);
  Tensor* a = net.add_convolution("conv_a", r, Weights("ka", m.ka), Weights("ba", m.ba), m.p);
  a = net.add_activation("relu_a", net.add_elementwise("add", a, r, ElementwiseOp::Add),
                         ActivationKind::Relu);
  Tensor* y = net.add_convolution("conv_b", a, Weights("kb", m.kb), Weights("bb", m.bb), m.p);
  y->set_name("y");
  net.mark_output(y);
  const Int8Builds b = build_fp32_and_int8(net, rng);
  ASSERT_TRUE(r->dynamic_range().has_value());
  EXPECT_EQ(r->dynamic_range()->min, 0.0f);
  EXPECT_EQ(written_dtypes(*b.int8)["conv_a"], DType::UInt8);
  expect_within_quantization_noise(b, rng);  // (clipped, before the fix: 16.6-17.1 dB)
}

// x [4, 6, 64] -> x W1 + b1 -> relu -> h W2^T: two INT8 matrix multiplies (linear layers, A's batch dims
// folded into M), the second with a transposed B, against the fp32 build.
TEST(Int8Engine, CalibratedMatrixMultipliesMatchFp32WithinTheQuantizationStep) {
  std::mt19937 rng(2004);
  const HostTensor w1 = random_tensor(DType::Float32, {64, 48}, rng, -0.3, 0.3);
  const HostTensor b1 = random_tensor(DType::Float32, {48}, rng);
  const HostTensor w2 = random_tensor(DType::Float32, {16, 48}, rng, -0.3, 0.3);
  Network net;
  add_two_layer_mlp(net, {4, 6, 64}, w1, b1, w2, ActivationKind::Relu);
  BuilderConfig config;
  config.threads = 2;
  config.timing_iterations = 0;
  CalibrationConfig calibration;
  calibration.calibrator = CalibratorKind::Max;
  auto data = [&](int n) {
    std::vector<std::map<std::string, HostTensor>> out;
    for (int i = 0; i < n; ++i) out.push_back({{"x", random_tensor(DType::Float32, {4, 6, 64}, rng)}});
    return out;
  };
  const auto fp32 = build(net, config);
  set_dynamic_ranges(net, calibrate(net, config, data(4), calibration));
  config.precisions = {Precision::FP32, Precision::INT8};
  config.int8_first_last = true;
  const auto int8 = build(net, config);
  int int8_layers = 0;
  for (const PlanLayerInfo& l : int8->layers()) int8_layers += l.int8 ? 1 : 0;
  EXPECT_EQ(int8_layers, 2);  // (mm1 reads the signed x: u8 with a zero point on a CPU without VNNI)
  // As for the convolutions: half a step per quantized element over 64- and 48-term sums, two layers: about
  // 1% of the output range, SQNR above 30 dB.
  for (const auto& sample : data(3)) EXPECT_GT(sqnr_db(run(int8, sample)[0], run(fp32, sample)[0]), 30.0);
}

TEST(Int8Engine, FirstAndLastLayersStayFp32ByDefaultAndNoRangeMeansFp32) {
  std::mt19937 rng(2002);
  ResidualNet model(rng);
  Network net;
  model.define(net);
  BuilderConfig config;
  config.threads = 2;
  config.timing_iterations = 0;
  config.precisions = {Precision::FP32, Precision::INT8};
  for (const PlanLayerInfo& l : build(net, config)->layers())
    EXPECT_FALSE(l.int8) << l.name << ": no ranges set";
  set_dynamic_ranges(net, calibrate(net, config, batches(rng, 2), CalibrationConfig{}));
  for (const PlanLayerInfo& l : build(net, config)->layers()) {
    EXPECT_EQ(l.int8, l.name == "conv_b") << l.name;  // conv_a first, conv_c last
  }
}

TEST(Int8Engine, ABatchThatDoesNotFitIsOneLineInvalidInput) {
  std::mt19937 rng(2003);
  ResidualNet model(rng);
  Network net;
  model.define(net);
  BuilderConfig config;
  config.threads = 2;
  const std::vector<std::pair<std::map<std::string, HostTensor>, std::string>> bad = {
      {{{"image", random_tensor(DType::Float32, {1, 16, 10, 9}, rng)}}, "'image' is not an input"},
      {{{"x", random_tensor(DType::Float32, {1, 16, 10, 8}, rng)}}, "input 'x' has shape [1, 16, 10, 8]"},
      {{}, "no array for input 'x'"},
  };
  for (const auto& [batch, says] : bad) {
    try {
      calibrate(net, config, {batch}, CalibrationConfig{});
      FAIL() << "no error for " << says;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

TEST(Int8Engine, ExactInt8IsAPropertyOfTheCpuBackendOnThisMachine) {
  std::string why;
  EXPECT_FALSE(backend_runs_int8("cuda", &why));
  EXPECT_EQ(why, "backend cuda folds no quantize/dequantize pairs");
  EXPECT_FALSE(backend_runs_int8("npu", &why));
  EXPECT_EQ(why, "unknown backend npu");
  why.clear();
  if (backend_runs_int8("cpu", &why)) {
    EXPECT_TRUE(why.empty()) << why;
  } else {
    EXPECT_NE(why.find("no VNNI"), std::string::npos) << why;
  }
}

TEST(Int8Engine, UnusableRangesAreRejected) {
  Network net;
  Tensor* x = net.add_input("x", DType::Float32, {2});
  EXPECT_THROW(x->set_dynamic_range(1.0f, -1.0f), Error);
  EXPECT_THROW(x->set_dynamic_range(0.0f, 0.0f), Error);
  EXPECT_THROW(x->set_dynamic_range(0.0f, INFINITY), Error);
  // A step that is not a normal float (amax 1e-40 / 255 underflows): 1 / scale would be infinite.
  EXPECT_THROW(x->set_dynamic_range(0.0f, 1e-40f), Error);
  EXPECT_THROW(x->set_dynamic_range(-1e-37f, 1e-37f), Error);
  x->set_dynamic_range(-2.0f, 3.0f);
  EXPECT_FLOAT_EQ(x->dynamic_range()->amax(), 3.0f);
  EXPECT_FLOAT_EQ(x->dynamic_range()->scale(), 3.0f / 127);
}

}  // namespace
}  // namespace kiln::engine
