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

PostOp act(ActivationKind kind, double alpha = 0, double beta = 0) {
  return PostOp{PostOp::Activation, ActivationParams{kind, alpha, beta}, 1.0};
}

void add_pointwise(std::vector<SweepCase>& cases) {
  using A = ActivationKind;
  const std::vector<std::pair<std::string, ActivationParams>> acts = {
      {"relu", {A::Relu}},
      {"sigmoid", {A::Sigmoid}},
      {"tanh", {A::Tanh}},
      {"gelu_erf", {A::GeluErf}},
      {"gelu_tanh", {A::GeluTanh}},
      {"silu", {A::Silu}},
      {"hardswish", {A::HardSwish}},
      {"hardsigmoid", {A::HardSigmoid, 0.2, 0.5}},
      {"leaky_relu", {A::LeakyRelu, 0.05}},
      {"elu", {A::Elu, 1.0}},
      {"selu", {A::Selu}},
      {"softplus", {A::Softplus, 1.0, 20.0}},
      {"softsign", {A::Softsign}},
      {"clip", {A::Clip, -0.5, 0.5}},
      {"mish", {A::Mish}},
  };
  for (const auto& [name, p] : acts) {
    cases.push_back({"nonfinite_" + name,
                     make_layer(LayerKind::Activation, p),
                     {nf(in({2, 21}, DType::Float32, -4, 4), 4)}});
  }
  using U = UnaryOp;
  const std::vector<std::pair<std::string, U>> unaries = {
      {"exp", U::Exp},     {"log", U::Log},     {"sqrt", U::Sqrt},   {"rsqrt", U::Rsqrt}, {"abs", U::Abs},
      {"neg", U::Neg},     {"recip", U::Recip}, {"erf", U::Erf},     {"sin", U::Sin},     {"cos", U::Cos},
      {"floor", U::Floor}, {"ceil", U::Ceil},   {"expm1", U::Expm1}, {"log1p", U::Log1p}, {"isnan", U::IsNan},
      {"isinf", U::IsInf}, {"sign", U::Sign},   {"round", U::Round},
  };
  for (const auto& [name, op] : unaries) {
    cases.push_back({"nonfinite_" + name,
                     make_layer(LayerKind::Unary, UnaryParams{op}),
                     {nf(in({2, 21}, DType::Float32, 0.1, 3), 4)}});
  }
  using E = ElementwiseOp;
  const std::vector<std::pair<std::string, E>> binaries = {
      {"add", E::Add}, {"sub", E::Sub}, {"mul", E::Mul}, {"div", E::Div},
      {"pow", E::Pow}, {"max", E::Max}, {"min", E::Min},
  };
  for (const auto& [name, op] : binaries) {
    cases.push_back(
        {"nonfinite_" + name,
         make_layer(LayerKind::Elementwise, ElementwiseParams{op}),
         {nf(in({3, 17}, DType::Float32, 0.1, 2), 5), nf(in({3, 17}, DType::Float32, 0.1, 2), 3)}});
  }
}

void add_reductions(std::vector<SweepCase>& cases) {
  using R = ReduceOp;
  for (const auto& [name, op] : std::vector<std::pair<std::string, R>>{
           {"sum", R::Sum}, {"mean", R::Mean}, {"max", R::Max}, {"min", R::Min}, {"argmax", R::ArgMax}}) {
    cases.push_back({"nonfinite_" + name,
                     make_layer(LayerKind::Reduce, ReduceParams{op, {1}, false}),
                     {nf(in({4, 13, 2}), 9)}});
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
      PoolingParams p;
      p.kind = kind;
      p.window = {3, 3};
      p.stride = {2, 2};
      p.pre_padding = p.post_padding = {1, 1};
      p.dilation = {1, 1};
      InputSpec x = nf(in({1, 3, 7, 7}), 11);
      x.offered = format;
      cases.push_back({std::string("nonfinite_") + (kind == PoolingParams::Max ? "max" : "avg") + "_" +
                           tensor_format_name(format),
                       make_layer(LayerKind::Pooling, p),
                       {x}});
    }
  }
  for (const auto& [name, post_ops] : std::vector<std::pair<std::string, std::vector<PostOp>>>{
           {"relu", {act(ActivationKind::Relu)}},
           {"clip_0_6", {act(ActivationKind::Clip, 0, 6)}},
           {"none", {}}}) {
    ConvolutionParams p{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, false, post_ops};
    cases.push_back(
        {"nonfinite_" + name,
         make_layer(LayerKind::Convolution, p, {random_weights({4, 3, 3, 3}, 5), random_weights({4}, 6)}),
         {nf(in({1, 3, 8, 8}), 37)}});
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
