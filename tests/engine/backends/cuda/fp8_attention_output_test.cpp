// The flash attention writes the E4M3 input of the FP8 projection after it, through the permute it writes
// into and the reshape view after that (view_source, docs/engine.md "Memory formats"), instead of a Reformat
// quantizing the reshaped output (EngineCuda.*, label gpu; skipped without FP8 tensor cores):
//   - the plan has no Reformat: the attention writes E4M3, the reshape passes the codes on, the matmul runs
//   FP8;
//   - the projection's output is bit for bit that of the same network where the reshaped attention output is
//   also
//     a plan output (so the attention writes fp16 and a Reformat quantizes it): the epilogue quantizes the
//     values it would have stored, with the reader's range, exactly as the Reformat does;
//   - within FP8's noise of the fp32 build (one FP8 product of 128 terms; about 30 dB, see
//   fp8_matmul_test.cpp;
//     the bound is 24 dB), and a serialized plan runs bit for bit as built.

#if KILN_HAVE_CUDA

#include <cstring>

#include "engine/backends/cuda/fp8_test_util.h"
#include "engine/engine_test_util.h"
#include "kiln/engine/calibration.h"
#include "sqnr.h"

namespace kiln::engine {
namespace {
using namespace testing;
using kiln::testing::sqnr_db;

constexpr int64_t kBatch = 2, kHeads = 2, kSeq = 96, kHeadDim = 64, kHidden = kHeads * kHeadDim;

/// q, k, v [B, H, S, D] -> attention -> permute [B, S, H, D] -> reshape [B, S, H * D] (r) -> r @ w (y). With
/// `r_out`, r is a plan output too.
void add_block(Network& net, const HostTensor& w, bool r_out) {
  const Dims dims = {kBatch, kHeads, kSeq, kHeadDim};
  Tensor* q = net.add_input("q", DType::Float32, dims);
  Tensor* k = net.add_input("k", DType::Float32, dims);
  Tensor* v = net.add_input("v", DType::Float32, dims);
  Tensor* a = net.add_attention("attn", q, k, v, nullptr, AttentionParams{});
  ShuffleParams permute;
  permute.first_perm = {0, 2, 1, 3};
  Tensor* p = net.add_shuffle("permute", a, permute);
  ShuffleParams reshape;
  reshape.has_reshape = true;
  reshape.reshape = {kBatch, kSeq, kHidden};
  Tensor* r = net.add_shuffle("reshape", p, reshape);
  r->set_name("r");
  Tensor* y = net.add_matrix_multiply("proj", r, false, net.add_constant("w", Weights("w", w)), false);
  y->set_name("y");
  net.mark_output(y);
  if (r_out) net.mark_output(r);
}

std::map<std::string, HostTensor> sample(std::mt19937& rng) {
  std::map<std::string, HostTensor> feed;
  for (const char* name : {"q", "k", "v"})
    feed[name] = random_tensor(DType::Float32, {kBatch, kHeads, kSeq, kHeadDim}, rng, -2, 2);
  return feed;
}

TEST(EngineCuda, Fp8AttentionWritesTheProjectionsE4m3InputThroughItsViews) {
  KILN_REQUIRE_FP8_GPU();
  std::mt19937 rng(2034);
  const HostTensor w = random_tensor(DType::Float32, {kHidden, 96}, rng, -0.2, 0.2);
  Network net, reference_net;
  add_block(net, w, false);
  add_block(reference_net, w, true);
  BuilderConfig config;
  config.backend = "cuda";
  config.timing_iterations = 0;  // the first tactics that apply: flash, FP8
  config.int8_first_last = true;
  const auto fp32 = build(net, config);
  CalibrationConfig calibration;
  calibration.calibrator = CalibratorKind::Max;
  std::vector<std::map<std::string, HostTensor>> data;
  for (int i = 0; i < 4; ++i) data.push_back(sample(rng));
  const auto ranges = calibrate(net, config, data, calibration);
  EXPECT_GE(set_dynamic_ranges(net, ranges), 1);
  EXPECT_GE(set_dynamic_ranges(reference_net, ranges), 1);
  config.precisions = {Precision::FP32, Precision::FP16, Precision::FP8};
  const auto plan = build(net, config);
  const auto reference = build(reference_net, config);
  auto count = [](const Plan& p, LayerKind kind) {
    int n = 0;
    for (const PlanLayerInfo& l : p.layers()) n += l.kind == kind;
    return n;
  };
  for (const PlanLayerInfo& l : plan->layers()) {
    if (l.kind == LayerKind::Attention) {
      EXPECT_EQ(l.tactic.rfind("flash", 0), 0u) << l.tactic;
      ASSERT_EQ(l.output_formats.size(), 1u);
      EXPECT_EQ(l.output_formats[0], TensorFormat::E4M3);
    }
    if (l.kind == LayerKind::MatrixMultiply) EXPECT_TRUE(l.fp8) << l.tactic;
  }
  EXPECT_EQ(count(*plan, LayerKind::Reformat), 0);
  EXPECT_EQ(count(*reference, LayerKind::Reformat), 1);
  const auto loaded = Plan::deserialize(plan->serialize());
  for (int i = 0; i < 3; ++i) {
    const auto feed = sample(rng);
    const HostTensor got = run(plan, feed)[0], want = run(reference, feed)[0];
    ASSERT_EQ(got.nbytes(), want.nbytes());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.nbytes()), 0) << "against the Reformat's";
    const HostTensor again = run(loaded, feed)[0];
    EXPECT_EQ(std::memcmp(again.data(), got.data(), got.nbytes()), 0) << "the loaded plan";
    const double db = sqnr_db(got, run(fp32, feed)[0]);
    EXPECT_GT(db, 24.0);
    EXPECT_LT(db, 50.0);
  }
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
