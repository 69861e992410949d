// Sweep cases: reduce, softmax, normalization, cumulative, topk.

#include "engine/sweep/sweep.h"

namespace kiln::engine::sweep {
namespace {

using F = DType;

void add_reduces(std::vector<SweepCase>& cases) {
  using R = ReduceOp;
  auto reduce = [](std::string name, R op, std::vector<int64_t> axes, bool keep, InputSpec x) {
    return SweepCase{name, make_layer(LayerKind::Reduce, ReduceParams{op, axes, keep}), {x}};
  };
  cases.push_back(reduce("sum_inner_keep", R::Sum, {2}, true, in({2, 3, 17})));
  cases.push_back(reduce("sum_outer", R::Sum, {0}, false, in({5, 3, 4})));
  cases.push_back(reduce("mean_middle_two", R::Mean, {1, 2}, false, in({2, 3, 4, 5})));
  cases.push_back(reduce("max_all", R::Max, {0, 1, 2}, false, in({3, 4, 5})));
  cases.push_back(reduce("min_middle_keep", R::Min, {1}, true, in({3, 7, 2})));
  cases.push_back(reduce("sum_non_adjacent", R::Sum, {0, 2}, true, in({3, 4, 5})));
  cases.push_back(reduce("prod", R::Prod, {1}, false, in({3, 6}, F::Float32, 0.5, 1.5)));
  cases.push_back(reduce("argmax", R::ArgMax, {1}, false, in({4, 9})));
  cases.push_back(reduce("argmin_keep", R::ArgMin, {0}, true, in({5, 3})));
  cases.push_back(reduce("any", R::Any, {1}, false, bools({4, 3})));
  cases.push_back(reduce("all", R::All, {0}, true, bools({3, 4})));
  cases.push_back(reduce("sum_int32", R::Sum, {1}, false, ints({3, 8}, F::Int32, -50, 50)));
  cases.push_back(reduce("max_int64", R::Max, {0}, false, ints({6, 2}, F::Int64, -50, 50)));
  cases.push_back(reduce("sum_f16", R::Sum, {1}, false, in({3, 40}, F::Float16)));
  cases.push_back(reduce("mean_bf16", R::Mean, {0}, false, in({20, 3}, F::BFloat16)));
  cases.push_back(reduce("sum_empty_axis", R::Sum, {1}, false, in({3, 0, 2})));
  // Contiguous rows (the fast row kernels on cuda): a warp's row in several 16-byte loads, a block's row,
  // rows of single-element loads (37 is no multiple of a vector), two trailing axes as one row.
  cases.push_back(reduce("mean_rows_warp", R::Mean, {2}, true, in({3, 5, 768})));
  cases.push_back(reduce("sum_rows_block_f16", R::Sum, {1}, false, in({3, 3000}, F::Float16)));
  cases.push_back(reduce("max_rows_unaligned", R::Max, {1}, false, in({7, 37})));
  cases.push_back(reduce("min_rows_two_axes_bf16", R::Min, {1, 2}, true, in({4, 6, 10}, F::BFloat16)));
}

void add_softmaxes(std::vector<SweepCase>& cases) {
  auto softmax = [](std::string name, int64_t axis, bool log, InputSpec x) {
    return SweepCase{name, make_layer(LayerKind::Softmax, SoftmaxParams{axis, log}), {x}};
  };
  cases.push_back(softmax("last", 2, false, in({2, 3, 19}, F::Float32, -5, 5)));
  cases.push_back(softmax("middle", 1, false, in({2, 7, 3}, F::Float32, -5, 5)));
  cases.push_back(softmax("log_first", 0, true, in({5, 4}, F::Float32, -5, 5)));
  cases.push_back(softmax("rank1_wide", 0, false, in({130}, F::Float32, -5, 5)));
  cases.push_back(softmax("f16", 1, false, in({3, 9}, F::Float16, -5, 5)));
  cases.push_back(softmax("log_bf16", 1, true, in({3, 9}, F::BFloat16, -5, 5)));
}

void add_normalizations(std::vector<SweepCase>& cases) {
  using N = NormalizationParams;
  auto norm = [](std::string name, N p, std::vector<Weights> w, InputSpec x) {
    return SweepCase{name, make_layer(LayerKind::Normalization, p, w), {x}};
  };
  cases.push_back(norm("layer_last_affine", N{N::Layer, 2, 1, 1e-5},
                       {random_weights({19}, 1), random_weights({19}, 2)}, in({2, 3, 19})));
  cases.push_back(
      norm("layer_two_dims_no_affine", N{N::Layer, 1, 1, 1e-5}, {Weights(), Weights()}, in({4, 3, 5})));
  cases.push_back(
      norm("layer_scale_only", N{N::Layer, 1, 1, 1e-3}, {random_weights({6}, 3), Weights()}, in({5, 6})));
  cases.push_back(norm("group", N{N::Group, 1, 2, 1e-5}, {random_weights({4}, 4), random_weights({4}, 5)},
                       in({2, 4, 3, 3})));
  cases.push_back(
      norm("group_rank3_no_affine", N{N::Group, 1, 3, 1e-5}, {Weights(), Weights()}, in({2, 6, 5})));
  cases.push_back(norm("instance", N{N::Instance, 1, 1, 1e-5},
                       {random_weights({3}, 6), random_weights({3}, 7)}, in({2, 3, 4, 5})));
  cases.push_back(norm("layer_f16", N{N::Layer, 1, 1, 1e-5}, {random_weights({8}, 8), random_weights({8}, 9)},
                       in({3, 8}, F::Float16)));
  cases.push_back(norm("group_bf16", N{N::Group, 1, 2, 1e-5},
                       {random_weights({4}, 10), random_weights({4}, 11)}, in({1, 4, 6}, F::BFloat16)));
  // RMS norm (Llama's): a warp's rows with a scale, two dims without weights, a block's fp16 rows (cuda's row
  // kernels: the warp path to 1024 elements, the block path beyond), a bias too.
  cases.push_back(
      norm("rms_last_scale", N{N::Rms, 2, 1, 1e-6}, {random_weights({64}, 12), Weights()}, in({2, 3, 64})));
  cases.push_back(
      norm("rms_two_dims_no_affine", N{N::Rms, 1, 1, 1e-5}, {Weights(), Weights()}, in({4, 3, 5})));
  cases.push_back(norm("rms_block_row_f16", N{N::Rms, 1, 1, 1e-6}, {random_weights({2048}, 13), Weights()},
                       in({3, 2048}, F::Float16)));
  cases.push_back(norm("rms_scale_bias_bf16", N{N::Rms, 1, 1, 1e-5},
                       {random_weights({24}, 14), random_weights({24}, 15)}, in({5, 24}, F::BFloat16)));
}

void add_cumulatives(std::vector<SweepCase>& cases) {
  using C = CumulativeParams;
  auto cum = [](std::string name, C p, InputSpec x) {
    return SweepCase{name, make_layer(LayerKind::Cumulative, p), {x}};
  };
  cases.push_back(cum("sum_axis1", C{C::Sum, 1, false, false}, in({3, 9, 2})));
  cases.push_back(cum("prod_exclusive_reverse", C{C::Prod, 0, true, true}, in({6, 3}, F::Float32, 0.5, 1.5)));
  cases.push_back(cum("max", C{C::Max, 1, false, false}, in({2, 11})));
  cases.push_back(cum("min_reverse", C{C::Min, 0, false, true}, in({7})));
  cases.push_back(cum("sum_int64_exclusive", C{C::Sum, 1, true, false}, ints({2, 6}, F::Int64, -9, 9)));
  cases.push_back(cum("sum_f16", C{C::Sum, 0, false, false}, in({12, 2}, F::Float16)));
}

void add_topks(std::vector<SweepCase>& cases) {
  auto topk = [](std::string name, TopKParams p, InputSpec x) {
    return SweepCase{name, make_layer(LayerKind::TopK, p), {x}};
  };
  cases.push_back(topk("largest_last", TopKParams{3, 1, true}, in({4, 10})));
  cases.push_back(topk("smallest_first", TopKParams{2, 0, false}, in({7, 3})));
  cases.push_back(topk("all_middle", TopKParams{5, 1, true}, in({2, 5, 3})));
  cases.push_back(topk("int32", TopKParams{2, 0, true}, ints({40}, F::Int32, -1000, 1000)));
  cases.push_back(topk("f16", TopKParams{4, 1, true}, in({2, 9}, F::Float16)));
}

}  // namespace

void add_reduction_cases(std::vector<SweepCase>& cases) {
  add_reduces(cases);
  add_softmaxes(cases);
  add_normalizations(cases);
  add_cumulatives(cases);
  add_topks(cases);
}

}  // namespace kiln::engine::sweep
