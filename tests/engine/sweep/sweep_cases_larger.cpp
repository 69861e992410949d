// Sweep cases a little larger than the others: sizes past one vector or one oneDNN block (channels not a
// multiple of 16, reductions over hundreds of elements), where kernels switch to their blocked main loops and
// handle tails. Still small enough for the whole sweep to take seconds.

#include "engine/sweep/sweep.h"

namespace kiln::engine::sweep {

void add_larger_cases(std::vector<SweepCase>& cases) {
  auto conv = [](std::string name, Dims x, Dims w, ConvolutionParams p, uint32_t seed) {
    int64_t out = p.transposed ? w[1] * p.groups : w[0];
    return SweepCase{
        name,
        make_layer(LayerKind::Convolution, p, {random_weights(w, seed), random_weights({out}, seed + 1)}),
        {in(x)}};
  };
  ConvolutionParams same{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, false, {}};
  cases.push_back(conv("larger_2d_c24_to_40", {1, 24, 12, 12}, {40, 24, 3, 3}, same, 1));
  ConvolutionParams pointwise_s2{{2, 2}, {0, 0}, {0, 0}, {1, 1}, {0, 0}, 1, false, {}};
  cases.push_back(conv("larger_1x1_s2_c32", {2, 32, 7, 7}, {48, 32, 1, 1}, pointwise_s2, 3));
  ConvolutionParams grouped{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 4, false, {}};
  cases.push_back(conv("larger_grouped_g4_c64", {1, 64, 9, 9}, {64, 16, 3, 3}, grouped, 5));
  ConvolutionParams depthwise{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 40, false, {}};
  cases.push_back(conv("larger_depthwise_c40", {1, 40, 10, 10}, {40, 1, 3, 3}, depthwise, 7));
  // The grouped shapes of issue 16's models: resnext50_32x4d (32 groups of 4 channels, stride 2) and
  // wav2vec2's positional convolution (1-D, 16 groups, a long kernel with padding of half its size).
  ConvolutionParams resnext{{2, 2}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 32, false, {}};
  cases.push_back(conv("larger_resnext_g32", {1, 128, 8, 8}, {128, 4, 3, 3}, resnext, 17));
  ConvolutionParams wav2vec2{{1}, {16}, {16}, {1}, {0}, 16, false, {}};
  cases.push_back(conv("larger_wav2vec2_pos_g16", {1, 64, 40}, {64, 4, 32}, wav2vec2, 19));
  ConvolutionParams deconv{{2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, true, {}};
  cases.push_back(conv("larger_deconv_c16_to_24", {1, 16, 6, 6}, {16, 24, 3, 3}, deconv, 9));

  auto matmul = [](std::string name, Dims a, Dims b, bool tb) {
    return SweepCase{
        name, make_layer(LayerKind::MatrixMultiply, MatrixMultiplyParams{false, tb, {}}), {in(a), in(b)}};
  };
  cases.push_back(matmul("larger_37x100x65", {37, 100}, {100, 65}, false));
  cases.push_back(matmul("larger_batched_tb", {3, 17, 64}, {3, 33, 64}, true));
  cases.push_back({"larger_const_b_bias",
                   make_layer(LayerKind::MatrixMultiply, MatrixMultiplyParams{},
                              {random_weights({96, 70}, 11), random_weights({70}, 12)}),
                   {in({2, 9, 96})}});

  cases.push_back({"larger_s70_d64",
                   make_layer(LayerKind::Attention, AttentionParams{}),
                   {in({1, 2, 70, 64}), in({1, 2, 70, 64}), in({1, 2, 70, 64})}});
  AttentionParams causal;
  causal.causal = true;
  cases.push_back({"larger_causal_s33_d32",
                   make_layer(LayerKind::Attention, causal),
                   {in({2, 1, 33, 32}), in({2, 1, 33, 32}), in({2, 1, 33, 32})}});

  // 70 queries: two blocks of the sgemm path, the second with its causal limit and mask rows offset by 64.
  AttentionParams causal_masked;
  causal_masked.causal = true;
  causal_masked.has_mask = true;
  cases.push_back({"larger_causal_masked_s70",
                   make_layer(LayerKind::Attention, causal_masked),
                   {in({1, 2, 70, 16}), in({1, 2, 70, 16}), in({1, 2, 70, 8}), in({2, 70, 70})}});

  // Grouped-query attention over key tiles and query blocks: 6 query heads on 2 kv heads, 70 keys, fp16 (the
  // cuda flash tactic's K/V tiles come from the shared head).
  AttentionParams gqa;
  gqa.causal = true;
  gqa.kv_group = 3;
  cases.push_back({"larger_gqa_causal_s70_f16",
                   make_layer(LayerKind::Attention, gqa),
                   {in({2, 6, 70, 64}, DType::Float16), in({2, 2, 70, 64}, DType::Float16),
                    in({2, 2, 70, 64}, DType::Float16)}});

  cases.push_back({"larger_1000",
                   make_layer(LayerKind::Softmax, SoftmaxParams{1, false}),
                   {in({4, 1000}, DType::Float32, -8, 8)}});
  cases.push_back(
      {"larger_768",
       make_layer(LayerKind::Normalization, NormalizationParams{NormalizationParams::Layer, 1, 1, 1e-5},
                  {random_weights({768}, 13), random_weights({768}, 14)}),
       {in({3, 768})}});
  cases.push_back(
      {"larger_group_32",
       make_layer(LayerKind::Normalization, NormalizationParams{NormalizationParams::Group, 1, 8, 1e-5},
                  {random_weights({32}, 15), random_weights({32}, 16)}),
       {in({1, 32, 7, 7})}});
  cases.push_back({"larger_sum_1000",
                   make_layer(LayerKind::Reduce, ReduceParams{ReduceOp::Sum, {1}, false}),
                   {in({8, 1000})}});
  cases.push_back({"larger_max_outer",
                   make_layer(LayerKind::Reduce, ReduceParams{ReduceOp::Max, {0}, false}),
                   {in({300, 37})}});
  cases.push_back({"larger_add_1031",
                   make_layer(LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::Add}),
                   {in({3, 1031}), in({1031})}});
  cases.push_back({"larger_gelu_4099",
                   make_layer(LayerKind::Activation, ActivationParams{ActivationKind::GeluTanh}),
                   {in({4099}, DType::Float32, -6, 6)}});
  cases.push_back(
      {"larger_avg_blocked16c_c40",
       make_layer(LayerKind::Pooling, pooling(PoolingParams::Average, {3, 3}, {1, 1}, {1, 1}, {1, 1})),
       {offered(in({1, 40, 14, 14}), TensorFormat::Blocked16c)}});
  ShuffleParams transpose;
  transpose.first_perm = {0, 2, 1, 3};
  cases.push_back(
      {"larger_transpose_heads", make_layer(LayerKind::Shuffle, transpose), {in({2, 65, 12, 64})}});
}

}  // namespace kiln::engine::sweep
