// Sweep cases: constant, shuffle, concat, slice, gather, scatter, padding, fill, shape, nonzero, pooling,
// resize, reformat.

#include "engine/sweep/sweep.h"

namespace kiln::engine::sweep {
namespace {

using F = DType;
using TF = TensorFormat;

void add_data_movement(std::vector<SweepCase>& cases) {
  cases.push_back(
      {"f32", make_layer(LayerKind::Constant, ConstantParams{}, {random_weights({2, 3}, 5)}), {}});
  cases.push_back(
      {"int64",
       make_layer(LayerKind::Constant, ConstantParams{}, {Weights(HostTensor::from_int64s({4, -2, 7}, {3}))}),
       {}});

  // first_perm, then a reshape (when `shape` is not empty), then second_perm.
  auto shuffle = [](std::string name, std::vector<int64_t> first, std::vector<int64_t> shape,
                    std::vector<int64_t> second, InputSpec x) {
    ShuffleParams p;
    p.first_perm = std::move(first);
    p.has_reshape = !shape.empty();
    p.reshape = std::move(shape);
    p.second_perm = std::move(second);
    return SweepCase{name, make_layer(LayerKind::Shuffle, p), {x}};
  };
  cases.push_back(shuffle("transpose", {0, 2, 1}, {}, {}, in({2, 5, 3})));
  cases.push_back(shuffle("reshape_zero_infer", {}, {0, -1}, {}, in({2, 3, 4})));
  cases.push_back(shuffle("transpose_reshape", {1, 0, 2}, {3, 8}, {}, in({2, 3, 4})));
  cases.push_back(shuffle("reshape_transpose", {}, {4, 6}, {1, 0}, in({2, 3, 4})));
  cases.push_back(shuffle("transpose_reshape_transpose", {2, 0, 1}, {4, 6}, {1, 0}, in({2, 3, 4})));
  cases.push_back(shuffle("rank5_perm_f16", {4, 2, 0, 3, 1}, {}, {}, in({2, 1, 3, 2, 3}, F::Float16)));
  cases.push_back(shuffle("perm_int64", {1, 0}, {}, {}, ints({3, 5}, F::Int64, -9, 9)));
  cases.push_back(shuffle("perm_bool", {1, 0}, {}, {}, bools({3, 5})));
  cases.push_back(shuffle("perm_zero_size", {1, 0}, {}, {}, in({0, 4})));

  cases.push_back({"axis1_three",
                   make_layer(LayerKind::Concat, ConcatParams{1}),
                   {in({2, 3, 2}), in({2, 1, 2}), in({2, 4, 2})}});
  cases.push_back({"axis0_int32",
                   make_layer(LayerKind::Concat, ConcatParams{0}),
                   {ints({2, 3}, F::Int32, -9, 9), ints({1, 3}, F::Int32, -9, 9)}});
  cases.push_back(
      {"last_zero_part", make_layer(LayerKind::Concat, ConcatParams{1}), {in({2, 3}), in({2, 0})}});

  cases.push_back({"strided",
                   make_layer(LayerKind::Slice, SliceParams{{1, 0, 2}, {2, 3, 2}, {1, 2, 1}}),
                   {in({4, 6, 5})}});
  cases.push_back(
      {"negative_stride", make_layer(LayerKind::Slice, SliceParams{{5, 3}, {3, 2}, {-2, -1}}), {in({7, 4})}});
  cases.push_back({"bf16", make_layer(LayerKind::Slice, SliceParams{{1}, {3}, {2}}), {in({8}, F::BFloat16)}});
  // Stride 0 repeats an element (aten.expand's broadcast): the inner dim, an outer and the inner at once,
  // fp16 and int64 (GQA's repeat of key / value heads; an expanded index).
  cases.push_back(
      {"broadcast_inner", make_layer(LayerKind::Slice, SliceParams{{0, 0}, {3, 5}, {1, 0}}), {in({3, 1})}});
  cases.push_back({"broadcast_outer_and_inner_f16",
                   make_layer(LayerKind::Slice, SliceParams{{0, 0, 0}, {2, 4, 6}, {1, 0, 0}}),
                   {in({2, 1, 1}, F::Float16)}});
  cases.push_back({"broadcast_middle_i64",
                   make_layer(LayerKind::Slice, SliceParams{{0, 0, 0}, {2, 3, 8}, {1, 0, 1}}),
                   {ints({2, 1, 8}, F::Int64, -9, 9)}});

  using G = GatherParams;
  cases.push_back({"default_axis1",
                   make_layer(LayerKind::Gather, G{G::Default, 1}),
                   {in({3, 5, 2}), ints({2, 2}, F::Int64, -5, 5)}});
  cases.push_back({"default_axis0_int32_index",
                   make_layer(LayerKind::Gather, G{G::Default, 0}),
                   {in({4, 3}), ints({5}, F::Int32, 0, 4)}});
  cases.push_back({"elements",
                   make_layer(LayerKind::Gather, G{G::Elements, 1}),
                   {in({3, 4}), ints({3, 6}, F::Int64, 0, 4)}});
  cases.push_back({"default_f16",
                   make_layer(LayerKind::Gather, G{G::Default, 0}),
                   {in({5, 2}, F::Float16), ints({3}, F::Int64, 0, 5)}});
  // Along the last dim with 16-byte output rows (cuda: a vector of outputs per thread), negative indices too.
  cases.push_back({"last_dim_f16",
                   make_layer(LayerKind::Gather, G{G::Default, 2}),
                   {in({3, 4, 16}, F::Float16), ints({16}, F::Int64, -16, 16)}});
  cases.push_back({"last_dim_f32_int32_index",
                   make_layer(LayerKind::Gather, G{G::Default, 1}),
                   {in({5, 6}), ints({8}, F::Int32, -6, 6)}});

  using S = ScatterParams;
  // Reduction None with one index per output row along the axis, so no two updates land on one element.
  cases.push_back({"none_axis0",
                   make_layer(LayerKind::Scatter, S{S::None, 0}),
                   {in({4, 3}), ints({1, 3}, F::Int64, 0, 4), in({1, 3})}});
  cases.push_back({"add_axis1",
                   make_layer(LayerKind::Scatter, S{S::Add, 1}),
                   {in({3, 5}), ints({3, 4}, F::Int64, 0, 5), in({3, 4})}});
  cases.push_back(
      {"add_int32",
       make_layer(LayerKind::Scatter, S{S::Add, 0}),
       {ints({4, 2}, F::Int32, -9, 9), ints({3, 2}, F::Int64, 0, 4), ints({3, 2}, F::Int32, -9, 9)}});

  using P = PaddingParams;
  cases.push_back({"constant",
                   make_layer(LayerKind::Padding, P{P::Constant, {0, 1, 2}, {1, 0, 1}, 0.5}),
                   {in({2, 3, 4})}});
  cases.push_back({"reflect", make_layer(LayerKind::Padding, P{P::Reflect, {0, 2}, {0, 1}}), {in({2, 5})}});
  cases.push_back({"replicate",
                   make_layer(LayerKind::Padding, P{P::Replicate, {0, 0, 1, 3}, {0, 0, 2, 1}}),
                   {in({1, 2, 3, 4})}});
  cases.push_back({"circular", make_layer(LayerKind::Padding, P{P::Circular, {0, 2}, {0, 3}}), {in({2, 4})}});
  cases.push_back({"constant_int64",
                   make_layer(LayerKind::Padding, P{P::Constant, {1}, {2}, 7}),
                   {ints({3}, F::Int64, -9, 9)}});

  using Fi = FillParams;
  cases.push_back({"constant", make_layer(LayerKind::Fill, Fi{Fi::Constant, F::Float32, {2, 3}, 1.5}), {}});
  cases.push_back({"arange_int64", make_layer(LayerKind::Fill, Fi{Fi::Arange, F::Int64, {7}, 3, -2}), {}});
  cases.push_back({"linspace", make_layer(LayerKind::Fill, Fi{Fi::Linspace, F::Float32, {5}, -1, 2}), {}});
  cases.push_back(
      {"constant_f16", make_layer(LayerKind::Fill, Fi{Fi::Constant, F::Float16, {4}, -0.25}), {}});

  cases.push_back({"rank3", make_layer(LayerKind::Shape, ShapeParams{}), {in({2, 1, 5})}});
  cases.push_back({"int64_rank1", make_layer(LayerKind::Shape, ShapeParams{}), {ints({6}, F::Int64, 0, 9)}});
  cases.push_back(
      {"float", make_layer(LayerKind::NonZero, NonZeroParams{}), {in({3, 4}, F::Float32, -1, 1)}});
  cases.push_back(
      {"int32_sparse", make_layer(LayerKind::NonZero, NonZeroParams{}), {ints({2, 3, 4}, F::Int32, 0, 2)}});
  cases.push_back({"bool", make_layer(LayerKind::NonZero, NonZeroParams{}), {bools({9})}});
}

struct Pool {
  std::string name;
  PoolingParams p;
  InputSpec x;
  TF offered = TF::Plain;
};

void add_poolings(std::vector<SweepCase>& cases) {
  using P = PoolingParams;
  const auto pool = pooling;
  P ceil = pool(P::Max, {3, 3}, {2, 2}, {0, 0}, {0, 0});
  ceil.ceil_mode = true;
  P avg_nopad = pool(P::Average, {3, 2}, {2, 1}, {1, 1}, {1, 0});
  avg_nopad.count_include_pad = false;
  P dilated = pool(P::Max, {2, 2}, {1, 1}, {1, 0}, {0, 1});
  dilated.dilation = {2, 2};
  P adaptive = pool(P::Average, {}, {}, {}, {});
  adaptive.adaptive = true;
  adaptive.output_size = {3, 2};
  P adaptive_max = adaptive;
  adaptive_max.kind = P::Max;
  adaptive_max.output_size = {4};
  std::vector<Pool> list = {
      {"max2d_3s2p1", pool(P::Max, {3, 3}, {2, 2}, {1, 1}, {1, 1}), in({2, 3, 7, 8})},
      {"max2d_ceil", ceil, in({1, 5, 8, 7})},
      {"avg2d_exclude_pad", avg_nopad, in({1, 4, 6, 5})},
      {"avg2d_include_pad", pool(P::Average, {2, 2}, {2, 2}, {1, 1}, {1, 1}), in({2, 3, 5, 5})},
      {"max2d_dilated", dilated, in({1, 2, 6, 6})},
      {"avg1d", pool(P::Average, {3}, {2}, {1}, {0}), in({2, 3, 9})},
      {"max3d", pool(P::Max, {2, 2, 2}, {2, 1, 2}, {0, 1, 0}, {1, 0, 0}), in({1, 2, 4, 3, 5})},
      {"adaptive_avg2d", adaptive, in({2, 3, 7, 5})},
      {"adaptive_max1d", adaptive_max, in({1, 3, 10})},
      {"max2d_blocked8c", pool(P::Max, {3, 3}, {2, 2}, {1, 1}, {1, 1}), in({1, 11, 6, 6}), TF::Blocked8c},
      {"avg2d_blocked16c", pool(P::Average, {2, 2}, {2, 2}, {0, 0}, {0, 0}), in({1, 19, 4, 6}),
       TF::Blocked16c},
      {"max2d_channels_last", pool(P::Max, {2, 3}, {1, 2}, {0, 1}, {1, 1}), in({2, 5, 5, 6}),
       TF::ChannelsLast},
      {"avg3d_blocked8c", pool(P::Average, {2, 2, 2}, {1, 2, 2}, {0, 0, 0}, {0, 0, 0}), in({1, 9, 3, 4, 4}),
       TF::Blocked8c},
      {"avg1d_channels_last", pool(P::Average, {2}, {2}, {1}, {0}), in({2, 5, 7}), TF::ChannelsLast},
      {"max3d_channels_last", pool(P::Max, {2, 2, 2}, {1, 2, 2}, {0, 0, 0}, {1, 1, 0}), in({1, 3, 3, 4, 4}),
       TF::ChannelsLast},
      {"max1d_blocked16c", pool(P::Max, {3}, {1}, {1}, {1}), in({1, 17, 6}), TF::Blocked16c},
      {"max2d_f16", pool(P::Max, {2, 2}, {2, 2}, {0, 0}, {0, 0}), in({1, 2, 4, 4}, F::Float16)},
      {"avg2d_bf16", pool(P::Average, {2, 2}, {1, 1}, {0, 0}, {0, 0}), in({1, 2, 4, 4}, F::BFloat16)},
      {"max2d_batch0", pool(P::Max, {2, 2}, {2, 2}, {0, 0}, {0, 0}), in({0, 2, 4, 4})},
  };
  for (Pool& p : list) {
    p.x.offered = p.offered;
    cases.push_back({p.name, make_layer(LayerKind::Pooling, p.p), {p.x}});
  }
}

void add_resizes(std::vector<SweepCase>& cases) {
  using R = ResizeParams;
  auto resize = [](std::string name, R::Mode mode, std::vector<int64_t> size, std::vector<double> scales,
                   bool align_corners, InputSpec x) {
    R p;
    p.mode = mode;
    p.output_size = std::move(size);
    p.scales = std::move(scales);
    p.align_corners = align_corners;
    return SweepCase{name, make_layer(LayerKind::Resize, p), {x}};
  };
  cases.push_back(resize("nearest2d_size", R::Nearest, {5, 7}, {}, false, in({1, 2, 3, 4})));
  cases.push_back(resize("nearest2d_scales", R::Nearest, {}, {2.0, 1.5}, false, in({1, 2, 3, 4})));
  cases.push_back(resize("linear2d", R::Linear, {6, 5}, {}, false, in({2, 1, 4, 3})));
  cases.push_back(resize("linear2d_align_corners", R::Linear, {7, 3}, {}, true, in({1, 3, 4, 5})));
  cases.push_back(resize("linear1d_down", R::Linear, {4}, {}, false, in({1, 2, 9})));
  cases.push_back(resize("linear3d", R::Linear, {3, 4, 2}, {}, false, in({1, 1, 2, 3, 3})));
  cases.push_back(resize("nearest_f16", R::Nearest, {6, 6}, {}, false, in({1, 1, 3, 3}, F::Float16)));
}

void add_reformats(std::vector<SweepCase>& cases) {
  auto reformat = [](std::string name, TF from, TF to, InputSpec x) {
    x.offered = from;
    return SweepCase{name, make_layer(LayerKind::Reformat, ReformatParams{from, to}), {x}};
  };
  cases.push_back(reformat("plain_to_blocked8c_odd_c", TF::Plain, TF::Blocked8c, in({2, 5, 3, 3})));
  cases.push_back(reformat("blocked16c_to_plain", TF::Blocked16c, TF::Plain, in({1, 19, 2, 3})));
  cases.push_back(reformat("plain_to_channels_last_3d", TF::Plain, TF::ChannelsLast, in({2, 3, 7})));
  cases.push_back(reformat("channels_last_to_plain_5d", TF::ChannelsLast, TF::Plain, in({1, 4, 2, 3, 2})));
  cases.push_back(reformat("blocked8c_to_blocked16c", TF::Blocked8c, TF::Blocked16c, in({1, 12, 3, 2})));
  cases.push_back(reformat("channels_last_to_blocked8c", TF::ChannelsLast, TF::Blocked8c, in({1, 9, 2, 2})));
  cases.push_back(
      reformat("blocked16c_to_channels_last_5d", TF::Blocked16c, TF::ChannelsLast, in({1, 18, 2, 2, 3})));
  cases.push_back(reformat("blocked8c_to_plain_3d", TF::Blocked8c, TF::Plain, in({2, 11, 5})));
  cases.push_back(
      reformat("plain_to_channels_last_f16", TF::Plain, TF::ChannelsLast, in({1, 3, 2, 2}, F::Float16)));
}

}  // namespace

void add_movement_cases(std::vector<SweepCase>& cases) {
  add_data_movement(cases);
  add_poolings(cases);
  add_resizes(cases);
  add_reformats(cases);
}

}  // namespace kiln::engine::sweep
