// Sweep cases with NaN, +inf and -inf in the inputs: every kernel propagates them as the reference (and
// torch) does (docs/engine.md, "NaN and infinity").

#include "engine/sweep/sweep.h"

namespace kiln::engine::sweep {
namespace {

/// `x` with every `every`-th element non-finite.
InputSpec nf(InputSpec x, int64_t every) {
  x.nonfinite_every = every;
  return x;
}

/// A non-finite copy ("nonfinite_<name>") of every f32 activation, unary and binary case already in `cases`.
void add_pointwise(std::vector<SweepCase>& cases) {
  const size_t n = cases.size();
  for (size_t i = 0; i < n; ++i) {
    const LayerKind k = cases[i].layer.kind;
    if (k != LayerKind::Activation && k != LayerKind::Unary && k != LayerKind::Elementwise) continue;
    SweepCase c = cases[i];
    if (c.inputs.empty() || c.inputs[0].dtype != DType::Float32 || !c.also_run.empty()) continue;
    c.name = "nonfinite_" + c.name;
    int64_t every = 4;  // other periods for other inputs: NaN meets inf, inf meets finite values
    for (InputSpec& x : c.inputs) x = nf(x, every--);
    cases.push_back(std::move(c));
  }
}

void add_reductions(std::vector<SweepCase>& cases) {
  using R = ReduceOp;
  for (const auto& [name, op] : std::vector<std::pair<std::string, R>>{
           {"sum", R::Sum}, {"mean", R::Mean}, {"max", R::Max}, {"min", R::Min}, {"argmax", R::ArgMax}}) {
    cases.push_back({"nonfinite_" + name,
                     make_layer(LayerKind::Reduce, ReduceParams{op, {1}, false}),
                     {nf(in({4, 13, 2}), 9)}});
    if (op != R::ArgMax) {  // and over contiguous rows (cuda's row kernels)
      cases.push_back({"nonfinite_rows_" + name,
                       make_layer(LayerKind::Reduce, ReduceParams{op, {2}, false}),
                       {nf(in({4, 2, 13}), 9)}});
    }
  }
  cases.push_back(
      {"nonfinite_last", make_layer(LayerKind::Softmax, SoftmaxParams{1, false}), {nf(in({5, 12}), 17)}});
  cases.push_back({"nonfinite_log_middle",
                   make_layer(LayerKind::Softmax, SoftmaxParams{1, true}),
                   {nf(in({2, 9, 3}), 13)}});
  cases.push_back(
      {"nonfinite_layer",
       make_layer(LayerKind::Normalization, NormalizationParams{NormalizationParams::Layer, 1, 1, 1e-5},
                  {random_weights({16}, 1), random_weights({16}, 2)}),
       {nf(in({4, 16}), 23)}});
  cases.push_back(
      {"nonfinite_rms",
       make_layer(LayerKind::Normalization, NormalizationParams{NormalizationParams::Rms, 1, 1, 1e-6},
                  {random_weights({16}, 1), Weights()}),
       {nf(in({4, 16}), 23)}});
  cases.push_back(
      {"nonfinite_group",
       make_layer(LayerKind::Normalization, NormalizationParams{NormalizationParams::Group, 1, 2, 1e-5},
                  {random_weights({4}, 3), random_weights({4}, 4)}),
       {nf(in({2, 4, 3, 3}), 29)}});
  using C = CumulativeParams;
  for (const auto& [name, op] :
       std::vector<std::pair<std::string, C::Op>>{{"sum", C::Sum}, {"max", C::Max}, {"min", C::Min}}) {
    cases.push_back({"nonfinite_" + name,
                     make_layer(LayerKind::Cumulative, C{op, 1, false, false}),
                     {nf(in({3, 11}), 7)}});
  }
  cases.push_back({"nonfinite", make_layer(LayerKind::TopK, TopKParams{3, 1, true}), {nf(in({3, 10}), 4)}});
}

void add_spatial(std::vector<SweepCase>& cases) {
  for (auto kind : {PoolingParams::Max, PoolingParams::Average}) {
    for (auto format : {TensorFormat::Plain, TensorFormat::Blocked8c}) {
      PoolingParams p = pooling(kind, {3, 3}, {2, 2}, {1, 1}, {1, 1});
      InputSpec x = offered(nf(in({1, 3, 7, 7}), 11), format);
      cases.push_back({std::string("nonfinite_") + (kind == PoolingParams::Max ? "max" : "avg") + "_" +
                           tensor_format_name(format),
                       make_layer(LayerKind::Pooling, p),
                       {x}});
    }
  }
  for (const auto& [name, post_ops] : std::vector<std::pair<std::string, std::vector<PostOp>>>{
           {"relu", {activation_post_op(ActivationKind::Relu)}},
           {"clip_0_6", {activation_post_op(ActivationKind::Clip, 0, 6)}},
           {"none", {}}}) {
    ConvolutionParams p{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, false, post_ops};
    cases.push_back(
        {"nonfinite_" + name,
         make_layer(LayerKind::Convolution, p, {random_weights({4, 3, 3, 3}, 5), random_weights({4}, 6)}),
         {nf(in({1, 3, 8, 8}), 37)}});
    // 8 input channels too: the channel count of half-precision tensor-core kernels (cuDNN pads 3 to 8).
    cases.push_back(
        {"nonfinite_c8_" + name,
         make_layer(LayerKind::Convolution, p, {random_weights({8, 8, 3, 3}, 9), random_weights({8}, 10)}),
         {nf(in({1, 8, 8, 8}), 37)}});
    cases.push_back({"nonfinite_" + name,
                     make_layer(LayerKind::MatrixMultiply, MatrixMultiplyParams{false, false, post_ops},
                                {random_weights({6, 5}, 7), random_weights({5}, 8)}),
                     {nf(in({4, 6}), 7)}});
  }
  cases.push_back({"nonfinite_q",
                   make_layer(LayerKind::Attention, AttentionParams{}),
                   {nf(in({1, 2, 4, 8}), 19), in({1, 2, 5, 8}), nf(in({1, 2, 5, 8}), 23)}});
}

}  // namespace

void add_nonfinite_cases(std::vector<SweepCase>& cases) {
  add_pointwise(cases);
  add_reductions(cases);
  add_spatial(cases);
}

}  // namespace kiln::engine::sweep
