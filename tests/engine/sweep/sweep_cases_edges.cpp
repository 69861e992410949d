// Sweep cases at the edges of each kind's semantics: windows that hang over the padding, masks that hide
// every key, causal attention with more queries than keys, paddings as large as the dim, ties, integer
// arithmetic.

#include "engine/sweep/sweep.h"

namespace kiln::engine::sweep {
namespace {

using F = DType;

void add_spatial_edges(std::vector<SweepCase>& cases) {
  using P = PoolingParams;
  auto pool_case = [&](std::string name, P p, InputSpec x) {
    cases.push_back({name, make_layer(LayerKind::Pooling, p), {x}});
  };
  P ceil_pad = pooling(P::Average, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  ceil_pad.ceil_mode = true;
  pool_case("edge_avg_ceil_padded_include", ceil_pad, in({1, 2, 6, 7}));
  ceil_pad.count_include_pad = false;
  pool_case("edge_avg_ceil_padded_exclude", ceil_pad, in({1, 2, 6, 7}));
  P ceil_max = pooling(P::Max, {2, 3}, {3, 2}, {1, 0}, {1, 1});
  ceil_max.ceil_mode = true;
  pool_case("edge_max_ceil_stride_over_window", ceil_max, offered(in({1, 9, 7, 8}), TensorFormat::Blocked8c));
  pool_case("edge_max_window_covers_all", pooling(P::Max, {5, 4}, {1, 1}, {1, 0}, {0, 1}), in({2, 3, 4, 3}));
  P adaptive_up;
  adaptive_up.kind = P::Average;
  adaptive_up.adaptive = true;
  adaptive_up.output_size = {5, 7};
  pool_case("edge_adaptive_avg_upsample", adaptive_up, in({1, 2, 3, 4}));

  auto conv = [&](std::string name, Dims x, Dims w, ConvolutionParams p) {
    int64_t out = p.transposed ? w[1] * p.groups : w[0];
    cases.push_back(
        {name,
         make_layer(LayerKind::Convolution, p, {random_weights(w, 41), random_weights({out}, 42)}),
         {in(x)}});
  };
  conv("edge_padding_wider_than_kernel", {1, 2, 4, 4}, {3, 2, 3, 3},
       ConvolutionParams{{1, 1}, {3, 2}, {2, 3}, {1, 1}, {0, 0}, 1, false, {}});
  conv("edge_stride_over_kernel", {1, 3, 9, 10}, {4, 3, 2, 2},
       ConvolutionParams{{3, 4}, {0, 0}, {0, 0}, {1, 1}, {0, 0}, 1, false, {}});
  conv("edge_1x1_strided_padded", {1, 4, 5, 6}, {3, 4, 1, 1},
       ConvolutionParams{{2, 2}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, false, {}});
  conv("edge_dilation_covers_input", {1, 2, 5, 5}, {2, 2, 3, 3},
       ConvolutionParams{{1, 1}, {0, 0}, {0, 0}, {2, 2}, {0, 0}, 1, false, {}});
  conv("edge_deconv_dilated_outpad", {1, 3, 4, 4}, {3, 2, 3, 3},
       ConvolutionParams{{2, 2}, {2, 2}, {2, 2}, {2, 2}, {1, 1}, 1, true, {}});
  conv("edge_deconv_grouped_s3", {1, 4, 3, 3}, {4, 2, 2, 2},
       ConvolutionParams{{3, 3}, {0, 0}, {0, 0}, {1, 1}, {0, 0}, 2, true, {}});
}

void add_attention_edges(std::vector<SweepCase>& cases) {
  AttentionParams causal;
  causal.causal = true;
  cases.push_back({"edge_causal_more_queries",
                   make_layer(LayerKind::Attention, causal),
                   {in({1, 2, 7, 8}), in({1, 2, 4, 8}), in({1, 2, 4, 8})}});
  cases.push_back({"edge_causal_more_keys",
                   make_layer(LayerKind::Attention, causal),
                   {in({1, 2, 3, 8}), in({1, 2, 8, 8}), in({1, 2, 8, 8})}});
  AttentionParams masked;
  masked.has_mask = true;
  // Every key hidden (a Bool mask of false): softmax over nothing.
  cases.push_back({"edge_mask_hides_all",
                   make_layer(LayerKind::Attention, masked),
                   {in({1, 1, 3, 4}), in({1, 1, 5, 4}), in({1, 1, 5, 4}), InputSpec{F::Bool, {3, 5}, 0, 1}}});
  cases.push_back({"edge_single_key",
                   make_layer(LayerKind::Attention, AttentionParams{}),
                   {in({2, 1, 4, 8}), in({2, 1, 1, 8}), in({2, 1, 1, 3})}});
}

void add_value_edges(std::vector<SweepCase>& cases) {
  using P = PaddingParams;
  cases.push_back({"edge_reflect_dim_minus_one",
                   make_layer(LayerKind::Padding, P{P::Reflect, {0, 3}, {0, 3}}),
                   {in({2, 4})}});
  cases.push_back({"edge_circular_whole_dim",
                   make_layer(LayerKind::Padding, P{P::Circular, {0, 4}, {0, 4}}),
                   {in({2, 4})}});
  cases.push_back(
      {"edge_negative_stride_to_zero", make_layer(LayerKind::Slice, SliceParams{{6}, {4}, {-2}}), {in({7})}});
  // Small integer ranges: many ties, which ArgMax/ArgMin and TopK break by the lower index.
  cases.push_back({"edge_argmax_ties",
                   make_layer(LayerKind::Reduce, ReduceParams{ReduceOp::ArgMax, {1}, false}),
                   {ints({4, 9}, F::Int32, 0, 3)}});
  cases.push_back({"edge_argmin_ties_f32",
                   make_layer(LayerKind::Reduce, ReduceParams{ReduceOp::ArgMin, {0}, true}),
                   {in({9, 4}, F::Float32, 0, 3)}});
  cases.push_back({"edge_topk_ties",
                   make_layer(LayerKind::TopK, TopKParams{4, 1, false}),
                   {ints({3, 8}, F::Int64, 0, 3)}});
  cases.push_back({"edge_topk_k_is_dim", make_layer(LayerKind::TopK, TopKParams{6, 0, true}), {in({6, 2})}});
  using E = ElementwiseOp;
  for (auto [name, op] : std::vector<std::pair<std::string, E>>{{"div", E::Div},
                                                                {"truncdiv", E::TruncDiv},
                                                                {"pow", E::Pow},
                                                                {"max", E::Max},
                                                                {"min", E::Min},
                                                                {"sub", E::Sub}}) {
    cases.push_back({"edge_int32_" + name,
                     make_layer(LayerKind::Elementwise, ElementwiseParams{op}),
                     {ints({12}, F::Int32, -7, 8), ints({12}, F::Int32, 1, 4)}});
  }
  cases.push_back({"edge_cumprod_reverse_exclusive_f16",
                   make_layer(LayerKind::Cumulative, CumulativeParams{CumulativeParams::Prod, 1, true, true}),
                   {in({2, 7}, F::Float16, 0.5, 1.5)}});
  cases.push_back(
      {"edge_group_is_instance",
       make_layer(LayerKind::Normalization, NormalizationParams{NormalizationParams::Group, 1, 4, 1e-5},
                  {random_weights({4}, 43), random_weights({4}, 44)}),
       {in({2, 4, 5})}});
  cases.push_back(
      {"edge_layer_norm_constant_row",
       make_layer(LayerKind::Normalization, NormalizationParams{NormalizationParams::Layer, 1, 1, 1e-5},
                  {random_weights({6}, 45), random_weights({6}, 46)}),
       {in({3, 6}, F::Float32, 0.5, 0.5)}});
  ResizeParams one;
  one.mode = ResizeParams::Linear;
  one.output_size = {1, 3};
  one.align_corners = true;
  cases.push_back(
      {"edge_linear_align_corners_size_one", make_layer(LayerKind::Resize, one), {in({1, 2, 4, 5})}});
  ResizeParams down;
  down.mode = ResizeParams::Nearest;
  down.scales = {0.5, 0.75};
  cases.push_back({"edge_nearest_downscale", make_layer(LayerKind::Resize, down), {in({1, 2, 6, 8})}});
}

}  // namespace

void add_edge_cases(std::vector<SweepCase>& cases) {
  add_spatial_edges(cases);
  add_attention_edges(cases);
  add_value_edges(cases);
}

}  // namespace kiln::engine::sweep
