// Sweep cases: elementwise, activation, unary, cast, select and fused pointwise programs.

#include "engine/sweep/sweep.h"

namespace kiln::engine::sweep {
namespace {

using F = DType;

SweepCase binary(std::string name, ElementwiseOp op, InputSpec a, InputSpec b) {
  return {name, make_layer(LayerKind::Elementwise, ElementwiseParams{op}), {a, b}};
}

void add_elementwise(std::vector<SweepCase>& cases) {
  using E = ElementwiseOp;
  cases.push_back(binary("add_broadcast", E::Add, in({2, 3, 4}), in({3, 1})));
  cases.push_back(binary("sub_scalar_rank0", E::Sub, in({5, 3}), in({})));
  cases.push_back(binary("mul_both_broadcast", E::Mul, in({4, 1, 3}), in({1, 5, 1})));
  cases.push_back(binary("div", E::Div, in({33}), in({33}, F::Float32, 0.5, 2.0)));
  cases.push_back(binary("pow", E::Pow, in({2, 9}, F::Float32, 0.1, 2.0), in({9}, F::Float32, -2.0, 2.0)));
  // Broadcasts the fast kernel fills per run (a squeeze-excite scale, runs of 900 past its 512-element
  // blocks; runs of 35 inside them) or copies per period (a bias of 37 or of 700, past a block), each order.
  cases.push_back(binary("mul_channel_runs", E::Mul, in({1, 8, 30, 30}), in({1, 8, 1, 1})));
  cases.push_back(binary("sub_runs_first", E::Sub, in({2, 6, 1, 1}), in({2, 6, 5, 7})));
  cases.push_back(binary("add_bias_period", E::Add, in({3, 4, 37}), in({37})));
  cases.push_back(
      binary("div_period_first", E::Div, in({700}, F::Float32, 0.5, 2), in({3, 700}, F::Float32, 0.5, 2)));
  // After a channels-last convolution the fast kernel follows ChannelsLast: a squeeze-excite scale read as it
  // is, a full-size Plain operand asked in ChannelsLast, and a lower-rank operand that lies differently
  // there (the kernel stays Plain).
  const InputSpec cl = offered(in({2, 8, 5, 6}), TensorFormat::ChannelsLast);
  cases.push_back(binary("mul_channels_last_se", E::Mul, cl, in({2, 8, 1, 1})));
  cases.push_back(binary("add_channels_last_full", E::Add, in({2, 8, 5, 6}), cl));
  cases.push_back(binary("sub_channels_last_rank3", E::Sub, cl, in({8, 5, 6})));
  cases.push_back(binary("max", E::Max, in({3, 17}), in({3, 17})));
  cases.push_back(binary("min_broadcast", E::Min, in({3, 1, 5}), in({4, 1})));
  cases.push_back(binary("floordiv", E::FloorDiv, in({20}, F::Float32, -4, 4), in({20}, F::Float32, 0.5, 2)));
  cases.push_back(binary("truncdiv", E::TruncDiv, in({20}, F::Float32, -4, 4), in({20}, F::Float32, 0.5, 2)));
  cases.push_back(binary("mod", E::Mod, in({20}, F::Float32, -4, 4), in({20}, F::Float32, 0.5, 2)));
  cases.push_back(binary("add_f16", E::Add, in({3, 7}, F::Float16), in({7}, F::Float16)));
  cases.push_back(binary("mul_bf16", E::Mul, in({3, 7}, F::BFloat16), in({3, 1}, F::BFloat16)));
  cases.push_back(binary("add_int64", E::Add, ints({4, 5}, F::Int64, -50, 50), ints({5}, F::Int64, -50, 50)));
  cases.push_back(binary("mul_int32", E::Mul, ints({12}, F::Int32, -9, 9), ints({12}, F::Int32, -9, 9)));
  cases.push_back(
      binary("floordiv_int64", E::FloorDiv, ints({12}, F::Int64, -9, 9), ints({12}, F::Int64, 1, 4)));
  cases.push_back(binary("mod_int32_neg", E::Mod, ints({12}, F::Int32, -9, 9), ints({12}, F::Int32, -4, -1)));
  cases.push_back(binary("equal_int", E::Equal, ints({10}, F::Int32, 0, 3), ints({10}, F::Int32, 0, 3)));
  cases.push_back(binary("less_broadcast", E::Less, in({2, 6}), in({6})));
  cases.push_back(binary("greater_equal_f16", E::GreaterEqual, in({9}, F::Float16), in({9}, F::Float16)));
  cases.push_back(binary("and", E::And, bools({3, 4}), bools({4})));
  cases.push_back(binary("or", E::Or, bools({7}), bools({7})));
  cases.push_back(binary("xor", E::Xor, bools({7}), bools({1})));
  cases.push_back(binary("add_zero_size", E::Add, in({0, 3}), in({3})));
}

void add_activations(std::vector<SweepCase>& cases) {
  using A = ActivationKind;
  struct Act {
    std::string name;
    ActivationParams p;
  };
  std::vector<Act> list = {
      {"relu", {A::Relu}},
      {"sigmoid", {A::Sigmoid}},
      {"tanh", {A::Tanh}},
      {"gelu_erf", {A::GeluErf}},
      {"gelu_tanh", {A::GeluTanh}},
      {"silu", {A::Silu}},
      {"hardswish", {A::HardSwish}},
      {"hardsigmoid", {A::HardSigmoid, 0.2, 0.5}},
      {"leaky_relu", {A::LeakyRelu, 0.05}},
      {"elu", {A::Elu, 1.3}},
      {"selu", {A::Selu}},
      {"softplus", {A::Softplus, 2.0, 20.0}},
      {"softsign", {A::Softsign}},
      {"clip", {A::Clip, -0.3, 0.6}},
      {"mish", {A::Mish}},
  };
  // Values in [-4, 4): both sides of every activation's knees.
  for (const Act& a : list)
    cases.push_back({a.name, make_layer(LayerKind::Activation, a.p), {in({3, 37}, F::Float32, -4, 4)}});
  cases.push_back({"gelu_f16",
                   make_layer(LayerKind::Activation, ActivationParams{A::GeluErf}),
                   {in({2, 9}, F::Float16, -4, 4)}});
  cases.push_back({"silu_bf16",
                   make_layer(LayerKind::Activation, ActivationParams{A::Silu}),
                   {in({2, 9}, F::BFloat16, -4, 4)}});
  cases.push_back({"silu_channels_last",
                   make_layer(LayerKind::Activation, ActivationParams{A::Silu}),
                   {offered(in({1, 5, 3, 4, 2}, F::Float32, -4, 4), TensorFormat::ChannelsLast)}});
  cases.push_back(
      {"relu_zero_size", make_layer(LayerKind::Activation, ActivationParams{A::Relu}), {in({2, 0, 3})}});
}

void add_unaries(std::vector<SweepCase>& cases) {
  using U = UnaryOp;
  struct Un {
    std::string name;
    U op;
    double lo, hi;
  };
  // Each op on its domain (log/sqrt positive, asin/acos in [-1, 1]); ranges keep results finite and moderate.
  std::vector<Un> list = {
      {"exp", U::Exp, -3, 3},       {"log", U::Log, 0.05, 4},   {"sqrt", U::Sqrt, 0, 4},
      {"rsqrt", U::Rsqrt, 0.1, 4},  {"abs", U::Abs, -2, 2},     {"neg", U::Neg, -2, 2},
      {"recip", U::Recip, 0.2, 3},  {"erf", U::Erf, -3, 3},     {"sin", U::Sin, -6, 6},
      {"cos", U::Cos, -6, 6},       {"tan", U::Tan, -1.2, 1.2}, {"asin", U::Asin, -1, 1},
      {"acos", U::Acos, -1, 1},     {"atan", U::Atan, -4, 4},   {"sinh", U::Sinh, -3, 3},
      {"cosh", U::Cosh, -3, 3},     {"floor", U::Floor, -3, 3}, {"ceil", U::Ceil, -3, 3},
      {"round", U::Round, -3, 3},   {"sign", U::Sign, -2, 2},   {"expm1", U::Expm1, -2, 2},
      {"log1p", U::Log1p, -0.9, 3}, {"isnan", U::IsNan, -1, 1}, {"isinf", U::IsInf, -1, 1},
  };
  for (const Un& u : list) {
    cases.push_back(
        {u.name, make_layer(LayerKind::Unary, UnaryParams{u.op}), {in({2, 3, 11}, F::Float32, u.lo, u.hi)}});
  }
  cases.push_back({"not", make_layer(LayerKind::Unary, UnaryParams{U::Not}), {bools({13})}});
  cases.push_back(
      {"abs_int32", make_layer(LayerKind::Unary, UnaryParams{U::Abs}), {ints({13}, F::Int32, -20, 20)}});
  cases.push_back(
      {"neg_int64", make_layer(LayerKind::Unary, UnaryParams{U::Neg}), {ints({13}, F::Int64, -20, 20)}});
  cases.push_back(
      {"exp_f16", make_layer(LayerKind::Unary, UnaryParams{U::Exp}), {in({13}, F::Float16, -2, 2)}});
  cases.push_back(
      {"sqrt_bf16", make_layer(LayerKind::Unary, UnaryParams{U::Sqrt}), {in({13}, F::BFloat16, 0, 4)}});
}

void add_casts(std::vector<SweepCase>& cases) {
  auto cast = [](std::string name, InputSpec x, DType to) {
    return SweepCase{name, make_layer(LayerKind::Cast, CastParams{to}), {x}};
  };
  cases.push_back(cast("f32_to_f16", in({4, 5}, F::Float32, -70000, 70000), F::Float16));
  cases.push_back(cast("f32_to_bf16", in({4, 5}), F::BFloat16));
  cases.push_back(cast("f16_to_f32", in({4, 5}, F::Float16), F::Float32));
  cases.push_back(cast("f32_to_int32", in({4, 5}, F::Float32, -5, 5), F::Int32));
  cases.push_back(cast("f32_to_int64", in({4, 5}, F::Float32, -5, 5), F::Int64));
  cases.push_back(cast("int64_to_f32", ints({4, 5}, F::Int64, -1000, 1000), F::Float32));
  cases.push_back(cast("int32_to_int64", ints({4, 5}, F::Int32, -1000, 1000), F::Int64));
  cases.push_back(cast("bool_to_f32", bools({4, 5}), F::Float32));
  cases.push_back(cast("f32_to_bool", in({4, 5}, F::Float32, -1, 1), F::Bool));
  cases.push_back(cast("uint8_to_f16", ints({9}, F::UInt8, 0, 255), F::Float16));
}

void add_selects(std::vector<SweepCase>& cases) {
  auto select = [](std::string name, InputSpec c, InputSpec a, InputSpec b) {
    return SweepCase{name, make_layer(LayerKind::Select, SelectParams{}), {c, a, b}};
  };
  cases.push_back(select("broadcast", bools({2, 1, 4}), in({3, 4}), in({})));
  cases.push_back(select("f16", bools({6}), in({6}, F::Float16), in({6}, F::Float16)));
  cases.push_back(select("int64", bools({2, 3}), ints({2, 3}, F::Int64, -9, 9), ints({3}, F::Int64, -9, 9)));
}

PointwiseInstr instr(LayerKind kind, int64_t op, std::vector<int64_t> operands, ActivationParams a = {}) {
  PointwiseInstr i;
  i.kind = kind;
  i.op = op;
  i.operands = std::move(operands);
  i.activation = a;
  return i;
}

void add_fused(std::vector<SweepCase>& cases) {
  constexpr int64_t I = PointwiseInstr::kInput, W = PointwiseInstr::kWeight, T = PointwiseInstr::kTemp;
  // (x * y) -> sigmoid -> exp -> + w0 (a broadcast weight) -> max with x.
  FusedPointwiseParams p;
  p.program = {
      instr(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Mul), {I + 0, I + 1}),
      instr(LayerKind::Activation, 0, {T + 0}, ActivationParams{ActivationKind::Sigmoid}),
      instr(LayerKind::Unary, static_cast<int64_t>(UnaryOp::Exp), {T + 1}),
      instr(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Add), {T + 2, W + 0}),
      instr(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Max), {T + 3, I + 0}),
  };
  cases.push_back({"mul_sigmoid_exp_add_weight_max",
                   make_layer(LayerKind::FusedPointwise, p, {random_weights({5}, 77)}),
                   {in({3, 4, 5}), in({4, 1})}});
  // Tan (libm's tanf in the fast kernel, double in the reference).
  FusedPointwiseParams q;
  q.program = {
      instr(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Sub), {I + 0, I + 1}),
      instr(LayerKind::Unary, static_cast<int64_t>(UnaryOp::Tan), {T + 0}),
      instr(LayerKind::Activation, 0, {T + 1}, ActivationParams{ActivationKind::GeluTanh}),
  };
  cases.push_back({"sub_tan_gelu", make_layer(LayerKind::FusedPointwise, q), {in({2, 7}), in({2, 7})}});
  FusedPointwiseParams r;
  r.program = {
      instr(LayerKind::Elementwise, static_cast<int64_t>(ElementwiseOp::Div), {I + 0, I + 1}),
      instr(LayerKind::Activation, 0, {T + 0}, ActivationParams{ActivationKind::Relu}),
  };
  // GPT-2's tanh GELU as exported: 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * pow(x, 3)))), its
  // constants one-element weights (the fast kernel cubes by multiplies, not std::pow).
  const auto scalar = [](float v, Dims dims = {}) { return Weights(HostTensor::from_floats({v}, dims)); };
  using E = ElementwiseOp;
  const auto ew = [](E op) { return static_cast<int64_t>(op); };
  FusedPointwiseParams g;
  g.program = {
      instr(LayerKind::Elementwise, ew(E::Mul), {I + 0, W + 0}),
      instr(LayerKind::Elementwise, ew(E::Pow), {I + 0, W + 1}),
      instr(LayerKind::Elementwise, ew(E::Mul), {T + 1, W + 2}),
      instr(LayerKind::Elementwise, ew(E::Add), {I + 0, T + 2}),
      instr(LayerKind::Elementwise, ew(E::Mul), {T + 3, W + 3}),
      instr(LayerKind::Activation, 0, {T + 4}, ActivationParams{ActivationKind::Tanh}),
      instr(LayerKind::Elementwise, ew(E::Add), {T + 5, W + 4}),
      instr(LayerKind::Elementwise, ew(E::Mul), {T + 0, T + 6}),
  };
  cases.push_back({"gelu_tanh_as_exported",
                   make_layer(LayerKind::FusedPointwise, g,
                              {scalar(0.5f), scalar(3.0f), scalar(0.044715f), scalar(0.7978845608f), scalar(1.0f)}),
                   {in({3, 700}, F::Float32, -4, 4)}});
  // pow by each scalar exponent the fast kernel special-cases (2, 0.5, -1, 1), by another (2.5), by a
  // one-element input (an exponent in [1, 1.5)) and a scalar base (2 ** x), summed.
  FusedPointwiseParams e;
  e.program = {
      instr(LayerKind::Elementwise, ew(E::Pow), {I + 0, W + 0}),
      instr(LayerKind::Elementwise, ew(E::Pow), {I + 0, W + 1}),
      instr(LayerKind::Elementwise, ew(E::Add), {T + 0, T + 1}),
      instr(LayerKind::Elementwise, ew(E::Pow), {I + 0, W + 2}),
      instr(LayerKind::Elementwise, ew(E::Add), {T + 2, T + 3}),
      instr(LayerKind::Elementwise, ew(E::Pow), {I + 0, W + 3}),
      instr(LayerKind::Elementwise, ew(E::Add), {T + 4, T + 5}),
      instr(LayerKind::Elementwise, ew(E::Pow), {I + 0, W + 4}),
      instr(LayerKind::Elementwise, ew(E::Add), {T + 6, T + 7}),
      instr(LayerKind::Elementwise, ew(E::Pow), {I + 0, I + 1}),
      instr(LayerKind::Elementwise, ew(E::Add), {T + 8, T + 9}),
      instr(LayerKind::Elementwise, ew(E::Pow), {W + 0, I + 0}),
      instr(LayerKind::Elementwise, ew(E::Add), {T + 10, T + 11}),
  };
  cases.push_back({"pow_scalar_exponents",
                   make_layer(LayerKind::FusedPointwise, e,
                              {scalar(2.0f), scalar(0.5f, {1}), scalar(-1.0f), scalar(1.0f, {1, 1}), scalar(2.5f)}),
                   {in({5, 130}, F::Float32, 0.1, 2), in({}, F::Float32, 1, 1.5)}});
  // The mul_sigmoid_exp_add_weight_max program on a channels-last input: x * sigmoid-scale of [2, 5, 1, 1],
  // plus a per-channel weight [5, 1, 1].
  cases.push_back({"fused_channels_last",
                   make_layer(LayerKind::FusedPointwise, p, {random_weights({5, 1, 1}, 78)}),
                   {offered(in({2, 5, 4, 3}), TensorFormat::ChannelsLast), in({2, 5, 1, 1})}});
  // Float32 and Bool in one program. GPT-2's attention mask as the builder fuses it: and(a constant causal
  // mask, the padding mask), then where(mask, 0, -3.4e38).
  HostTensor causal(DType::Bool, {1, 1, 6, 6});
  for (int64_t i = 0; i < 36; ++i) causal.set_from_double(i, i % 6 <= i / 6 ? 1.0 : 0.0);
  FusedPointwiseParams mask;
  mask.program = {instr(LayerKind::Elementwise, ew(E::And), {W + 0, I + 0}),
                  instr(LayerKind::Select, 0, {T + 0, W + 1, W + 2})};
  cases.push_back({"causal_mask_and_where",
                   make_layer(LayerKind::FusedPointwise, mask,
                              {Weights(causal), scalar(0.0f), scalar(-3.4028234663852886e+38f)}),
                   {bools({1, 1, 1, 6})}});
  // where(x * y >= 0.5 or isnan(x), exp(x), -y) over NaN and infinities, and its Bool condition alone.
  InputSpec x = in({4, 9}, F::Float32, -2, 2), y = in({9}, F::Float32, -2, 2);
  x.nonfinite_every = 4;
  y.nonfinite_every = 3;
  FusedPointwiseParams pick;
  pick.program = {
      instr(LayerKind::Elementwise, ew(E::Mul), {I + 0, I + 1}),
      instr(LayerKind::Elementwise, ew(E::GreaterEqual), {T + 0, W + 0}),
      instr(LayerKind::Unary, static_cast<int64_t>(UnaryOp::IsNan), {I + 0}),
      instr(LayerKind::Elementwise, ew(E::Or), {T + 1, T + 2}),
      instr(LayerKind::Unary, static_cast<int64_t>(UnaryOp::Exp), {I + 0}),
      instr(LayerKind::Unary, static_cast<int64_t>(UnaryOp::Neg), {I + 1}),
      instr(LayerKind::Select, 0, {T + 3, T + 4, T + 5}),
  };
  cases.push_back(
      {"compare_or_isnan_select", make_layer(LayerKind::FusedPointwise, pick, {scalar(0.5f)}), {x, y}});
  FusedPointwiseParams cond = pick;
  cond.program.resize(4);
  cases.push_back({"compare_or_isnan", make_layer(LayerKind::FusedPointwise, cond, {scalar(0.5f)}), {x, y}});
  cases.push_back({"div_relu_f16",
                   make_layer(LayerKind::FusedPointwise, r),
                   {in({3, 8}, F::Float16), in({8}, F::Float16, 0.5, 2)}});
}

}  // namespace

void add_pointwise_cases(std::vector<SweepCase>& cases) {
  add_elementwise(cases);
  add_activations(cases);
  add_unaries(cases);
  add_casts(cases);
  add_selects(cases);
  add_fused(cases);
}

}  // namespace kiln::engine::sweep
