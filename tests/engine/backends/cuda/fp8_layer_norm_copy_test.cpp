// A layer norm whose output is both the residual stream (fp16) and the input of FP8 matmuls writes an E4M3
// copy of that output in its own pass (Layer::format_copies, docs/engine.md "Memory formats") instead of a
// Reformat quantizing it after it (EngineCuda.*, label gpu; skipped without FP8 tensor cores):
//   - the plan has no Reformat: the layer norm has two outputs, the second E4M3, which both FP8 matmuls read,
//     while the residual reads the first;
//   - its outputs are bit for bit those of a second plan that starts from the first one's layer-norm output
//     (an input, so a Cast writes it and a Reformat quantizes it, with the same dynamic range): the copy
//     quantizes the stored fp16 values exactly as the Reformat does; this holds at every batch of a dynamic
//     batch over two profiles;
//   - within FP8's noise of the fp32 build (one FP8 product of 96 terms: about 30 dB, see
//   fp8_matmul_test.cpp;
//     the bound is 24 dB), and a serialized plan runs bit for bit as built;
//   - a timed build has no failed candidate.

#if KILN_HAVE_CUDA

#include <cstring>

#include "engine/backends/cuda/fp8_test_util.h"
#include "engine/engine_test_util.h"
#include "kiln/engine/calibration.h"
#include "kiln/engine/tactic_stats.h"
#include "sqnr.h"

namespace kiln::engine {
namespace {
using namespace testing;
using kiln::testing::sqnr_db;

constexpr int64_t kHidden = 96;

struct NormThenFp8 {
  HostTensor gamma, beta, w1, w2;
  explicit NormThenFp8(std::mt19937& rng)
      : gamma(random_tensor(DType::Float32, {kHidden}, rng, 0.5, 1.5)),
        beta(random_tensor(DType::Float32, {kHidden}, rng, -0.5, 0.5)),
        w1(random_tensor(DType::Float32, {kHidden, kHidden}, rng, -0.2, 0.2)),
        w2(random_tensor(DType::Float32, {kHidden, 32}, rng, -0.2, 0.2)) {}
  /// h = layer_norm(x) (a plan output too); y = h @ w1 + h (the residual reads h as it is); z = h @ w2.
  void add_to(Network& net, int64_t batch) const {
    Tensor* x = net.add_input("x", DType::Float32, {batch, 16, kHidden});
    NormalizationParams np;
    np.axis = 2;
    Tensor* h = net.add_normalization("ln", x, np, Weights("gamma", gamma), Weights("beta", beta));
    h->set_name("h");
    net.mark_output(h);
    add_tail(net, h);
  }
  /// The layers after the layer norm, from an input h.
  void add_tail_to(Network& net, int64_t batch) const {
    add_tail(net, net.add_input("h", DType::Float32, {batch, 16, kHidden}));
  }

 private:
  void add_tail(Network& net, Tensor* h) const {
    Tensor* y = net.add_matrix_multiply("mm1", h, false, net.add_constant("w1", Weights("w1", w1)), false);
    y = net.add_elementwise("residual", y, h, ElementwiseOp::Add);
    y->set_name("y");
    Tensor* z = net.add_matrix_multiply("mm2", h, false, net.add_constant("w2", Weights("w2", w2)), false);
    z->set_name("z");
    net.mark_output(y);
    net.mark_output(z);
  }

 public:
  static std::vector<std::map<std::string, HostTensor>> samples(std::mt19937& rng, int n, int64_t batch) {
    std::vector<std::map<std::string, HostTensor>> out;
    for (int i = 0; i < n; ++i)
      out.push_back({{"x", random_tensor(DType::Float32, {batch, 16, kHidden}, rng, -3, 3)}});
    return out;
  }
};

/// The number of Reformat layers, and whether the layer norm writes an E4M3 copy (both FP8 matmuls reading
/// it).
struct Layout {
  int reformats = 0;
  bool copied = false;
  int fp8 = 0;
};
Layout layout(const Plan& plan) {
  Layout l;
  std::string copy;
  for (const PlanLayerInfo& info : plan.layers()) {
    l.reformats += info.kind == LayerKind::Reformat;
    l.fp8 += info.fp8;
    if (info.name == "ln" && info.output_formats.size() == 2 &&
        info.output_formats[1] == TensorFormat::E4M3) {
      l.copied = info.output_formats[0] == TensorFormat::Plain;
      copy = info.outputs[1];
    }
  }
  for (const PlanLayerInfo& info : plan.layers()) {
    if (info.kind == LayerKind::MatrixMultiply && info.fp8) l.copied = l.copied && info.inputs[0] == copy;
  }
  return l;
}

void expect_same_bits(const HostTensor& a, const HostTensor& b, const std::string& what) {
  ASSERT_EQ(a.nbytes(), b.nbytes()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0) << what;
}

/// The copy plan (x -> h, y, z) and the Reformat plan (h -> y, z), both FP8 where they may, calibrated on the
/// first with the max calibrator (the same ranges on both: h's is the copy's scale and the Reformat's).
struct Plans {
  std::shared_ptr<Plan> fp32, copied, reformatted;
};
/// `batch` -1: a dynamic batch, profile 0 for batches 1-2 and profile 1 for 1-4.
Plans build_plans(const NormThenFp8& model, int64_t batch, int timing_iterations, std::mt19937& rng) {
  Network net, tail;
  model.add_to(net, batch);
  model.add_tail_to(tail, batch);
  auto config_for = [&](const char* input) {
    BuilderConfig config;
    config.backend = "cuda";
    config.int8_first_last = true;
    config.timing_iterations = timing_iterations;
    if (batch < 0) {
      OptimizationProfile small, large;
      small.set_dimensions(input, {1, 16, kHidden}, {2, 16, kHidden}, {2, 16, kHidden});
      large.set_dimensions(input, {1, 16, kHidden}, {4, 16, kHidden}, {4, 16, kHidden});
      config.profiles = {small, large};
    }
    return config;
  };
  BuilderConfig config = config_for("x"), tail_config = config_for("h");
  Plans p;
  p.fp32 = build(net, config);
  CalibrationConfig calibration;
  calibration.calibrator = CalibratorKind::Max;
  const auto ranges =
      calibrate(net, config, NormThenFp8::samples(rng, 4, batch < 0 ? 2 : batch), calibration);
  EXPECT_GE(set_dynamic_ranges(net, ranges), 1);
  EXPECT_GE(set_dynamic_ranges(tail, ranges), 1);
  for (BuilderConfig* c : {&config, &tail_config})
    c->precisions = {Precision::FP32, Precision::FP16, Precision::FP8};
  p.copied = build(net, config);
  p.reformatted = build(tail, tail_config);
  return p;
}

/// Runs `sample` through the copy plan, then its h through the Reformat plan: y and z bit for bit the same.
std::vector<HostTensor> expect_copy_is_the_reformat(const Plans& p,
                                                    const std::map<std::string, HostTensor>& sample,
                                                    int profile, const std::string& what) {
  const std::vector<HostTensor> got = run(p.copied, sample, profile);  // h, y, z
  const std::vector<HostTensor> want = run(p.reformatted, {{"h", got[0]}}, profile);
  expect_same_bits(got[1], want[0], what + ": y against the Reformat's");
  expect_same_bits(got[2], want[1], what + ": z against the Reformat's");
  return got;
}

TEST(EngineCuda, Fp8LayerNormWritesAnE4m3CopyBesideItsOutput) {
  KILN_REQUIRE_FP8_GPU();
  std::mt19937 rng(2032);
  const NormThenFp8 model(rng);
  // (untimed: the first tactic that applies, FP8)
  const Plans plans = build_plans(model, 4, 0, rng);
  const Layout with_copy = layout(*plans.copied), with_reformat = layout(*plans.reformatted);
  EXPECT_EQ(with_copy.fp8, 2);
  EXPECT_TRUE(with_copy.copied);
  EXPECT_EQ(with_copy.reformats, 0);
  EXPECT_EQ(with_reformat.fp8, 2);
  EXPECT_EQ(with_reformat.reformats, 1);
  const auto loaded = Plan::deserialize(plans.copied->serialize());
  for (const auto& sample : NormThenFp8::samples(rng, 3, 4)) {
    const std::vector<HostTensor> got = expect_copy_is_the_reformat(plans, sample, 0, "batch 4");
    const std::vector<HostTensor> exact = run(plans.fp32, sample), again = run(loaded, sample);
    for (size_t o = 1; o < 3; ++o) {
      const std::string what = o == 1 ? "y" : "z";
      expect_same_bits(again[o], got[o], what + " of the loaded plan");
      const double db = sqnr_db(got[o], exact[o]);
      EXPECT_GT(db, 24.0) << what;
      EXPECT_LT(db, 50.0) << what;
    }
  }
  const Plans timed_plans = build_plans(model, 4, 2, rng);
  EXPECT_EQ(tactic_stats(*timed_plans.copied).failed, 0);
  for (const auto& sample : NormThenFp8::samples(rng, 1, 4)) {
    const std::vector<HostTensor> got = run(timed_plans.copied, sample),
                                  exact = run(timed_plans.fp32, sample);
    EXPECT_GT(sqnr_db(got[1], exact[1]), 24.0);
  }
}

// The copy follows the run's dims: a dynamic batch over two profiles, every batch bit for bit the Reformat's.
TEST(EngineCuda, Fp8LayerNormCopyWithADynamicBatch) {
  KILN_REQUIRE_FP8_GPU();
  std::mt19937 rng(2033);
  const NormThenFp8 model(rng);
  const Plans plans = build_plans(model, -1, 0, rng);
  EXPECT_TRUE(layout(*plans.copied).copied);
  EXPECT_EQ(layout(*plans.copied).reformats, 0);
  for (int64_t batch : {1, 3, 4, 2}) {
    expect_copy_is_the_reformat(plans, NormThenFp8::samples(rng, 1, batch)[0], batch > 2 ? 1 : 0,
                                "batch " + std::to_string(batch));
  }
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
