// Sweep cases under dynamic shapes: one kernel, created for a range of input dims, run at the opt dims, at
// other dims of the range and at the opt dims again (kernels that cache per-shape primitives, or bake opt
// dims into their setup, are checked here).

#include "engine/sweep/sweep.h"

namespace kiln::engine::sweep {

void add_dynamic_cases(std::vector<SweepCase>& cases) {
  using TF = TensorFormat;
  auto with = [](SweepCase c, std::vector<std::vector<Dims>> also_run) {
    c.name = "dynamic_" + c.name;
    c.also_run = std::move(also_run);
    return c;
  };
  ConvolutionParams conv{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, false, {}};
  conv.post_ops = {PostOp{PostOp::Activation, ActivationParams{ActivationKind::Relu}, 1.0}};
  cases.push_back(with(
      {"conv2d_relu",
       make_layer(LayerKind::Convolution, conv, {random_weights({6, 4, 3, 3}, 1), random_weights({6}, 2)}),
       {in({1, 4, 8, 8})}},
      {{{2, 4, 6, 7}}, {{1, 4, 10, 9}}}));
  ConvolutionParams residual = conv;
  residual.post_ops = {PostOp{PostOp::Sum, {}, 1.0},
                       PostOp{PostOp::Activation, ActivationParams{ActivationKind::Relu}, 1.0}};
  cases.push_back(with({"conv2d_residual_relu",
                        make_layer(LayerKind::Convolution, residual,
                                   {random_weights({4, 4, 3, 3}, 11), random_weights({4}, 12)}),
                        {in({1, 4, 6, 6}), in({1, 4, 6, 6})}},
                       {{{2, 4, 5, 7}, {2, 4, 5, 7}}}));
  MatrixMultiplyParams mm_residual{false, false, {PostOp{PostOp::Sum, {}, 0.5}}};
  cases.push_back(
      with({"matmul_const_b_residual",
            make_layer(LayerKind::MatrixMultiply, mm_residual, {random_weights({8, 5}, 13), Weights()}),
            {in({3, 8}), in({3, 5})}},
           {{{6, 8}, {6, 5}}}));
  ConvolutionParams strided{{2, 2}, {0, 1}, {1, 0}, {1, 1}, {0, 0}, 2, false, {}};
  cases.push_back(
      with({"conv2d_grouped_strided",
            make_layer(LayerKind::Convolution, strided, {random_weights({4, 3, 3, 3}, 3), Weights()}),
            {in({1, 6, 7, 7})}},
           {{{3, 6, 5, 9}}}));
  cases.push_back(with({"matmul",
                        make_layer(LayerKind::MatrixMultiply, MatrixMultiplyParams{}),
                        {in({2, 5, 8}), in({2, 8, 3})}},
                       {{{1, 9, 8}, {1, 8, 3}}, {{3, 1, 8}, {3, 8, 3}}}));
  cases.push_back(with({"matmul_const_b_bias",
                        make_layer(LayerKind::MatrixMultiply, MatrixMultiplyParams{},
                                   {random_weights({8, 4}, 4), random_weights({4}, 5)}),
                        {in({4, 8})}},
                       {{{1, 8}}, {{7, 8}}}));
  cases.push_back(with({"attention",
                        make_layer(LayerKind::Attention, AttentionParams{}),
                        {in({1, 2, 5, 8}), in({1, 2, 6, 8}), in({1, 2, 6, 4})}},
                       {{{1, 2, 3, 8}, {1, 2, 9, 8}, {1, 2, 9, 4}}}));
  cases.push_back(with({"softmax", make_layer(LayerKind::Softmax, SoftmaxParams{1, false}), {in({3, 17})}},
                       {{{5, 17}}, {{3, 4}}}));
  cases.push_back(with({"reduce_mean",
                        make_layer(LayerKind::Reduce, ReduceParams{ReduceOp::Mean, {1}, true}),
                        {in({2, 6, 3})}},
                       {{{4, 9, 3}}}));
  NormalizationParams layer_norm{NormalizationParams::Layer, 2, 1, 1e-5};
  cases.push_back(with(
      {"layer_norm",
       make_layer(LayerKind::Normalization, layer_norm, {random_weights({8}, 6), random_weights({8}, 7)}),
       {in({2, 3, 8})}},
      {{{1, 7, 8}}}));
  NormalizationParams group_norm{NormalizationParams::Group, 1, 2, 1e-5};
  cases.push_back(with(
      {"group_norm",
       make_layer(LayerKind::Normalization, group_norm, {random_weights({4}, 8), random_weights({4}, 9)}),
       {in({1, 4, 3, 3})}},
      {{{2, 4, 5, 2}}}));
  PoolingParams pool = pooling(PoolingParams::Max, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  InputSpec blocked = offered(in({1, 9, 6, 6}), TF::Blocked8c);
  cases.push_back(
      with({"max_pool_blocked8c", make_layer(LayerKind::Pooling, pool), {blocked}}, {{{2, 9, 9, 5}}}));
  cases.push_back(with({"add_broadcast",
                        make_layer(LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::Add}),
                        {in({2, 3, 4}), in({3, 1})}},
                       {{{5, 3, 4}, {3, 1}}, {{1, 3, 1}, {3, 1}}}));
  cases.push_back(with(
      {"gelu", make_layer(LayerKind::Activation, ActivationParams{ActivationKind::GeluErf}), {in({4, 33})}},
      {{{1, 7}}, {{9, 40}}}));
  ShuffleParams reshape;
  reshape.has_reshape = true;
  reshape.reshape = {0, -1};
  cases.push_back(
      with({"reshape_zero_infer", make_layer(LayerKind::Shuffle, reshape), {in({2, 3, 4})}}, {{{5, 3, 4}}}));
  ShuffleParams transpose;
  transpose.first_perm = {1, 0, 2};
  cases.push_back(
      with({"transpose", make_layer(LayerKind::Shuffle, transpose), {in({2, 3, 4})}}, {{{4, 1, 4}}}));
  cases.push_back(with({"reformat_plain_to_blocked16c",
                        make_layer(LayerKind::Reformat, ReformatParams{TF::Plain, TF::Blocked16c}),
                        {in({1, 5, 4, 4})}},
                       {{{2, 5, 3, 6}}}));
  cases.push_back(
      with({"nonzero", make_layer(LayerKind::NonZero, NonZeroParams{}), {ints({3, 4}, DType::Int32, 0, 2)}},
           {{{5, 4}}}));
  cases.push_back(with({"gather",
                        make_layer(LayerKind::Gather, GatherParams{GatherParams::Default, 0}),
                        {in({5, 3}), ints({4}, DType::Int64, 0, 5)}},
                       {{{5, 3}, {2}}}));
}

}  // namespace kiln::engine::sweep
