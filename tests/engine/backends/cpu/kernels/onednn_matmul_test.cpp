// The oneDNN matrix multiply tactic against the reference kernel.
//
// Tolerance: fp32 allclose(rtol=1e-4, atol=1e-5). oneDNN blocks the K reduction and uses FMA, so its sums
// are reassociated relative to the reference's sequential loop; operands in [-1, 1) with K <= 768 keep
// the partial sums small enough that the difference stays within that bound.

#include "engine/backends/cpu/kernels/kernel_test_util.h"

namespace kiln::engine::cpu::testing {
namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;

OneLayer matmul_layer(MatrixMultiplyParams p, const Dims* b_const, int64_t bias_n, uint32_t seed) {
  OneLayer l;
  l.layer.name = "mm";
  l.layer.kind = LayerKind::MatrixMultiply;
  l.layer.weights.push_back(b_const ? Weights("b", random_tensor(*b_const, seed)) : Weights());
  l.layer.weights.push_back(bias_n > 0 ? Weights("bias", random_tensor({bias_n}, seed + 1)) : Weights());
  l.layer.params = p;
  return l;
}

/// Runs tactic `tactic` with operand dims `runs` (each: a dims, plus b dims when b is an input); residual dims
/// appended.
void check_matmul(const OneLayer& l, std::vector<std::vector<Dims>> runs, const std::string& what,
                  const std::string& tactic = "onednn") {
  int64_t sums = count_sum_post_ops(l.layer.get<MatrixMultiplyParams>().post_ops);
  for (auto& in : runs) {
    OneLayer plain = l;  // shape inference without residual inputs
    plain.layer.get<MatrixMultiplyParams>().post_ops.clear();
    Dims y = plain.output_dims(in);
    for (int64_t i = 0; i < sums; ++i) in.push_back(y);
  }
  check_against_reference(l, tactic, runs[0], runs, kRtol, kAtol, what);
}

TEST(OnednnMatmul, LinearWithConstantWeightsFoldsBatch) {
  MatrixMultiplyParams p;
  p.transpose_b = true;  // torch linear: x [.., K] @ W[N, K]^T
  Dims w{48, 32};
  check_matmul(matmul_layer(p, &w, 48, 1), {{{2, 7, 32}}, {{1, 128, 32}}, {{5, 32}}}, "linear rank 3/2");
  MatrixMultiplyParams q;
  Dims w2{33, 17};
  check_matmul(matmul_layer(q, &w2, 0, 2), {{{3, 33}}, {{1, 2, 4, 33}}}, "constant B no bias odd sizes");
}

TEST(OnednnMatmul, BatchedBothInputsWithTransposesAndBroadcast) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      MatrixMultiplyParams p;
      p.transpose_a = ta;
      p.transpose_b = tb;
      auto dims = [](int64_t rows, int64_t cols, bool t, Dims batch) {
        batch.push_back(t ? cols : rows);
        batch.push_back(t ? rows : cols);
        return batch;
      };
      std::string what = std::string("ta=") + (ta ? "1" : "0") + " tb=" + (tb ? "1" : "0");
      check_matmul(matmul_layer(p, nullptr, 0, 3),
                   {{dims(5, 9, ta, {2, 3}), dims(9, 11, tb, {2, 3})},
                    {dims(4, 9, ta, {2, 1}), dims(9, 6, tb, {1, 3})},
                    {dims(1, 9, ta, {}), dims(9, 6, tb, {4})}},
                   what);
    }
  }
}

TEST(OnednnMatmul, TransposedAWithConstantB) {
  MatrixMultiplyParams p;
  p.transpose_a = true;
  Dims w{2, 10, 6};
  check_matmul(matmul_layer(p, &w, 6, 4), {{{2, 10, 5}}, {{3, 1, 10, 4}}},
               "batched constant B, transposed A");
}

TEST(OnednnMatmul, PostOpsAndResidual) {
  for (ActivationKind k : {ActivationKind::Relu, ActivationKind::GeluErf, ActivationKind::GeluTanh,
                           ActivationKind::Silu, ActivationKind::Sigmoid, ActivationKind::Tanh}) {
    MatrixMultiplyParams p;
    p.transpose_b = true;
    p.post_ops = {act(k)};
    Dims w{24, 40};
    check_matmul(matmul_layer(p, &w, 24, 5), {{{1, 9, 40}}}, activation_kind_name(k));
  }
  MatrixMultiplyParams r;
  PostOp sum;
  sum.kind = PostOp::Sum;
  r.post_ops = {act(ActivationKind::GeluErf), sum};
  Dims w{64, 20};
  check_matmul(matmul_layer(r, &w, 20, 6), {{{3, 5, 64}}, {{1, 64}}}, "gelu then residual");
  MatrixMultiplyParams s;
  PostOp half = sum;
  half.scale = -0.5;
  s.post_ops = {half, act(ActivationKind::Relu)};
  check_matmul(matmul_layer(s, nullptr, 0, 7), {{{2, 6, 8}, {2, 8, 7}}},
               "input B, scaled residual then relu");
}

// "onednn_1x1": a constant B as a 1x1 convolution's weights over A's rows; B as [K, N] and transposed [N, K],
// B with leading unit dims, A of rank 2 to 4, rows other than the build's (a primitive per row count), bias,
// activations and a residual. The first run's dims are the build's.
TEST(OnednnMatmul1x1, ConstantBAsConvolutionWeights) {
  MatrixMultiplyParams linear;
  linear.transpose_b = true;
  Dims w{48, 32};
  check_matmul(matmul_layer(linear, &w, 48, 41), {{{2, 7, 32}}, {{1, 128, 32}}, {{5, 32}}}, "linear",
               "onednn_1x1");
  MatrixMultiplyParams conv1d;  // GPT-2's Conv1D: x @ W, W [K, N]
  Dims w2{64, 96};
  check_matmul(matmul_layer(conv1d, &w2, 96, 42), {{{1, 16, 64}}, {{3, 64}}}, "x @ W", "onednn_1x1");
  Dims w3{1, 33, 17};
  check_matmul(matmul_layer(conv1d, &w3, 0, 43), {{{3, 33}}, {{1, 2, 4, 33}}},
               "B [1, K, N], odd sizes, no bias", "onednn_1x1");
  for (ActivationKind k : {ActivationKind::Relu, ActivationKind::GeluTanh, ActivationKind::GeluErf}) {
    MatrixMultiplyParams p;
    p.post_ops = {act(k)};
    check_matmul(matmul_layer(p, &w2, 96, 44), {{{1, 9, 64}}}, activation_kind_name(k), "onednn_1x1");
  }
  MatrixMultiplyParams r;
  PostOp sum;
  sum.kind = PostOp::Sum;
  r.post_ops = {sum};
  Dims w4{96, 64};
  check_matmul(matmul_layer(r, &w4, 64, 45), {{{1, 16, 96}}, {{2, 96}}}, "residual", "onednn_1x1");
}

TEST(OnednnMatmul1x1, DoesNotApplyToAnInputBOrABatchOfBOrTransposedA) {
  MatrixMultiplyParams p;
  const KernelRow& r = row(LayerKind::MatrixMultiply, "onednn_1x1");
  EXPECT_FALSE(r.runs(matmul_layer(p, nullptr, 0, 46).info({{2, 4}, {4, 3}}), nullptr));
  Dims batch{2, 4, 3};
  EXPECT_FALSE(r.runs(matmul_layer(p, &batch, 0, 47).info({{2, 5, 4}}), nullptr));
  MatrixMultiplyParams ta;
  ta.transpose_a = true;
  Dims w{4, 3};
  EXPECT_FALSE(r.runs(matmul_layer(ta, &w, 0, 48).info({{4, 5}}), nullptr));
}

TEST(OnednnMatmul, DoesNotApplyToSoftsign) {
  MatrixMultiplyParams p;
  p.post_ops = {act(ActivationKind::Softsign)};
  Dims w{4, 4};
  OneLayer l = matmul_layer(p, &w, 0, 8);
  EXPECT_FALSE(row(LayerKind::MatrixMultiply, "onednn").runs(l.info({{2, 4}}), nullptr));
}

TEST(OnednnMatmul, LayersLargeEnoughForSeveralThreads) {
  // As OnednnConvolution.LayersLargeEnoughForSeveralThreads: 256x256x256 (16.8M multiply-accumulates) takes
  // every thread of a 16-thread pool; 2x64x256 by 256x128 (4.2M), four. Sums of 256 products of values in
  // [-1, 1): kRtol / kAtol as the other cases.
  MatrixMultiplyParams p;
  p.transpose_b = true;
  Dims w{256, 256};
  check_matmul(matmul_layer(p, &w, 256, 31), {{{256, 256}}, {{2, 8, 256}}}, "linear 256");
  MatrixMultiplyParams q;
  check_matmul(matmul_layer(q, nullptr, 0, 32), {{{2, 64, 256}, {2, 256, 128}}}, "batched 2x64x256x128");
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
