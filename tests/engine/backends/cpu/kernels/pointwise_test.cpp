// The vectorized pointwise kernels (fused programs, activations, binary_instr elementwise) against the
// reference.
//
// Tolerance: fp32 allclose(rtol=1e-4, atol=1e-5). The kernel evaluates in float with polynomial exp/erf/
// tanh (a few ulp); the reference evaluates each step in double and rounds once at the end.

#include "engine/backends/cpu/kernels/kernel_test_util.h"

namespace kiln::engine::cpu::testing {
namespace {

constexpr double kPointwiseRtol = 1e-4, kPointwiseAtol = 1e-5;
constexpr int64_t kIn = PointwiseInstr::kInput, kW = PointwiseInstr::kWeight, kT = PointwiseInstr::kTemp;

PointwiseInstr binary_instr(ElementwiseOp op, int64_t a, int64_t b) {
  PointwiseInstr in;
  in.kind = LayerKind::Elementwise;
  in.op = static_cast<int64_t>(op);
  in.operands = {a, b};
  return in;
}

PointwiseInstr activation_instr(ActivationKind k, int64_t a, double alpha = 0, double beta = 0) {
  PointwiseInstr in;
  in.kind = LayerKind::Activation;
  in.activation = ActivationParams{k, alpha, beta};
  in.operands = {a};
  return in;
}

PointwiseInstr unary(UnaryOp op, int64_t a) {
  PointwiseInstr in;
  in.kind = LayerKind::Unary;
  in.op = static_cast<int64_t>(op);
  in.operands = {a};
  return in;
}

OneLayer fused(std::vector<PointwiseInstr> program, std::vector<Weights> weights = {}) {
  OneLayer l;
  l.layer.name = "fused";
  l.layer.kind = LayerKind::FusedPointwise;
  l.layer.params = FusedPointwiseParams{std::move(program)};
  l.layer.weights = std::move(weights);
  return l;
}

TEST(VecPointwise, FusedChainWithBroadcastInputsAndWeights) {
  // gelu(x0 * w0 + x1) + x2, with w0 per channel, x1 full, x2 broadcast over rows.
  OneLayer l = fused(
      {binary_instr(ElementwiseOp::Mul, kIn, kW), binary_instr(ElementwiseOp::Add, kT, kIn + 1),
       activation_instr(ActivationKind::GeluErf, kT + 1), binary_instr(ElementwiseOp::Add, kT + 2, kIn + 2)},
      {Weights("w", random_tensor({3, 1, 1}, 7))});
  check_against_reference(l, "vec", {{2, 3, 5, 7}, {2, 3, 5, 7}, {5, 7}},
                          {{{2, 3, 5, 7}, {2, 3, 5, 7}, {5, 7}}, {{1, 3, 40, 31}, {1, 3, 40, 31}, {40, 31}}},
                          kPointwiseRtol, kPointwiseAtol, "fused chain");
}

TEST(VecPointwise, EachUnaryOpInAChain) {
  for (UnaryOp op :
       {UnaryOp::Exp, UnaryOp::Log, UnaryOp::Sqrt, UnaryOp::Rsqrt, UnaryOp::Abs, UnaryOp::Neg, UnaryOp::Recip,
        UnaryOp::Erf, UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Expm1, UnaryOp::Log1p, UnaryOp::Sin,
        UnaryOp::Cos, UnaryOp::Round, UnaryOp::Sign, UnaryOp::Atan, UnaryOp::Sinh, UnaryOp::Cosh}) {
    // op(|x| * 3 + 0.25): positive arguments of a few units, valid for every op (tan, asin and acos: below).
    OneLayer l = fused(
        {unary(UnaryOp::Abs, kIn), binary_instr(ElementwiseOp::Mul, kT, kW),
         binary_instr(ElementwiseOp::Add, kT + 1, kW + 1), unary(op, kT + 2)},
        {Weights(HostTensor::from_floats({3.0f}, {1})), Weights(HostTensor::from_floats({0.25f}, {1}))});
    check_against_reference(l, "vec", {{3, 1000}}, {{{3, 1000}}, {{7}}}, kPointwiseRtol, kPointwiseAtol,
                            unary_op_name(op));
  }
}

TEST(VecPointwise, TrigonometryOnItsDomain) {
  // tan on (-1.2, 1.2), asin and acos on (-1, 1): |x| * 0.99 of x in [-1, 1) scaled by w.
  for (auto [op, w] : std::vector<std::pair<UnaryOp, float>>{
           {UnaryOp::Tan, 1.2f}, {UnaryOp::Asin, 0.99f}, {UnaryOp::Acos, 0.99f}}) {
    OneLayer l = fused({binary_instr(ElementwiseOp::Mul, kIn, kW), unary(op, kT)},
                       {Weights(HostTensor::from_floats({w}, {1}))});
    check_against_reference(l, "vec", {{3, 500}}, {{{3, 500}}}, kPointwiseRtol, kPointwiseAtol,
                            unary_op_name(op));
  }
}

TEST(VecPointwise, EachActivationLayer) {
  struct Case {
    ActivationKind kind;
    double alpha, beta;
  };
  for (Case c : std::vector<Case>{{ActivationKind::Relu, 0, 0},       {ActivationKind::Sigmoid, 0, 0},
                                  {ActivationKind::Tanh, 0, 0},       {ActivationKind::GeluErf, 0, 0},
                                  {ActivationKind::GeluTanh, 0, 0},   {ActivationKind::Silu, 0, 0},
                                  {ActivationKind::HardSwish, 0, 0},  {ActivationKind::HardSigmoid, 0.2, 0.5},
                                  {ActivationKind::LeakyRelu, 0.01, 0}, {ActivationKind::Elu, 1.2, 0},
                                  {ActivationKind::Selu, 0, 0},       {ActivationKind::Softplus, 2.0, 1.5},
                                  {ActivationKind::Softsign, 0, 0},   {ActivationKind::Clip, -0.5, 0.25},
                                  {ActivationKind::Mish, 0, 0}}) {
    OneLayer l;
    l.layer.name = "act";
    l.layer.kind = LayerKind::Activation;
    l.layer.params = ActivationParams{c.kind, c.alpha, c.beta};
    // Scale inputs to [-6, 6) so the saturating parts of each function are exercised too.
    OneLayer scaled =
        fused({binary_instr(ElementwiseOp::Mul, kIn, kW), activation_instr(c.kind, kT, c.alpha, c.beta)},
              {Weights(HostTensor::from_floats({6.0f}, {1}))});
    check_against_reference(l, "vec", {{4, 301}}, {{{4, 301}}}, kPointwiseRtol, kPointwiseAtol,
                            activation_kind_name(c.kind));
    check_against_reference(scaled, "vec", {{4, 301}}, {{{4, 301}}}, kPointwiseRtol, kPointwiseAtol,
                            std::string(activation_kind_name(c.kind)) + " x6");
  }
}

TEST(VecPointwise, ElementwiseBroadcast) {
  for (ElementwiseOp op : {ElementwiseOp::Add, ElementwiseOp::Sub, ElementwiseOp::Mul, ElementwiseOp::Div,
                           ElementwiseOp::Max, ElementwiseOp::Min}) {
    OneLayer l;
    l.layer.name = "ew";
    l.layer.kind = LayerKind::Elementwise;
    l.layer.params = ElementwiseParams{op};
    check_against_reference(l, "vec", {{2, 1, 9}, {5, 1}}, {{{2, 1, 9}, {5, 1}}, {{3, 4}, {3, 4}}},
                            kPointwiseRtol, kPointwiseAtol, elementwise_op_name(op));
  }
}

TEST(VecPointwise, PeriodicOperandsTiledOverBlocks) {
  // An operand repeating with a period (a [C] bias of [.., C]; a squeeze-excite scale [N, C, 1, 1] of a
  // channels-last tensor lies so too) is read as one tiled copy per block of whole periods: periods dividing
  // the default block (32), not dividing it (144: blocks of 432 and a tail), longer than it (1152: blocks of
  // one period), too long to tile (5000), two different periods in one program (144 and 432: the default
  // blocks, copied per period), as input and as weight.
  for (int64_t c : {32, 144, 1152, 5000}) {
    OneLayer l;
    l.layer.name = "ew";
    l.layer.kind = LayerKind::Elementwise;
    l.layer.params = ElementwiseParams{ElementwiseOp::Mul};
    check_against_reference(l, "vec", {{37, c}, {c}}, {{{37, c}, {c}}, {{1, 3, c}, {1, 1, c}}},
                            kPointwiseRtol, kPointwiseAtol, "period " + std::to_string(c));
    OneLayer w =
        fused({binary_instr(ElementwiseOp::Mul, kIn, kW), binary_instr(ElementwiseOp::Add, kT, kW + 1)},
              {Weights("w", random_tensor({c}, 11)), Weights("b", random_tensor({c}, 12))});
    check_against_reference(w, "vec", {{29, c}}, {{{29, c}}}, kPointwiseRtol, kPointwiseAtol,
                            "weights of period " + std::to_string(c));
  }
  OneLayer mixed =
      fused({binary_instr(ElementwiseOp::Mul, kIn, kIn + 1), binary_instr(ElementwiseOp::Add, kT, kIn + 2)});
  check_against_reference(mixed, "vec", {{5, 3, 144}, {144}, {3, 144}}, {{{5, 3, 144}, {144}, {3, 144}}},
                          kPointwiseRtol, kPointwiseAtol, "periods 144 and 432");
}

/// Runs `l` with its inputs stored in `in_formats` (converted from random plain values) and the output in the
/// formats the row asks for; compares the output, read back as plain, with the reference kernel.
void check_in_formats(const OneLayer& l, const std::vector<Dims>& dims,
                      const std::vector<TensorFormat>& in_formats, const TacticFormats& want,
                      const std::string& what) {
  LayerInfo info = l.info(dims);
  for (size_t k = 0; k < dims.size(); ++k) info.inputs[k].format = in_formats[k];
  const KernelRow& r = row(l.layer.kind, "vec");
  const TacticFormats got = r.formats(info);
  ASSERT_EQ(got.inputs, want.inputs) << what;
  ASSERT_EQ(got.outputs, want.outputs) << what;
  for (size_t k = 0; k < dims.size(); ++k) info.inputs[k].format = got.inputs[k];
  info.outputs[0].format = got.outputs[0];
  auto kernel = r.create(info);
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    auto state = kernel->create_state();
    std::vector<std::vector<float>> plain, stored;
    KernelArgs args;
    for (size_t k = 0; k < dims.size(); ++k) {
      plain.push_back(
          random_floats(static_cast<size_t>(numel(dims[k])), 40 + static_cast<uint32_t>(k), -4, 4));
      stored.push_back(to_format(plain.back(), dims[k], got.inputs[k]));
    }
    for (size_t k = 0; k < dims.size(); ++k)
      args.inputs.push_back(TensorView{stored[k].data(), DType::Float32, dims[k], got.inputs[k]});
    const Dims y = l.output_dims(dims);
    std::vector<float> out(static_cast<size_t>(format_numel(got.outputs[0], y)), std::nanf(""));
    args.outputs.push_back(TensorView{out.data(), DType::Float32, y, got.outputs[0]});
    args.pool = &pool;
    args.state = state.get();
    kernel->execute(args);
    expect_allclose(from_format(out, y, got.outputs[0]), run_reference(l, plain, dims), kPointwiseRtol,
                    kPointwiseAtol, what + ", " + std::to_string(threads) + " threads");
  }
}

TEST(VecPointwise, FollowsABlockedInputWithWholeBlocksOfChannels) {
  // A squeeze-excite gate between blocked (oneDNN nChw8c / nChw16c) convolutions: hardsigmoid(s) * x with the
  // scale s [N, C, 1, 1] in Plain (it lies the same in both orders when C fills whole blocks) or blocked, x
  // blocked; spatial sizes whose runs (H * W * lanes) do not divide the kernel's blocks. Then the other
  // inputs: one of the output's dims in Plain is read blocked (a reformat in front), one channel broadcast
  // over C is read as it is; channels that do not fill whole blocks keep every tensor Plain.
  constexpr TensorFormat kPlain = TensorFormat::Plain;
  OneLayer gate = fused({activation_instr(ActivationKind::HardSigmoid, kIn, 1.0 / 6, 0.5),
                         binary_instr(ElementwiseOp::Mul, kT, kIn + 1)});
  OneLayer add;
  add.layer.name = "add";
  add.layer.kind = LayerKind::Elementwise;
  add.layer.params = ElementwiseParams{ElementwiseOp::Add};
  for (TensorFormat b : {TensorFormat::Blocked8c, TensorFormat::Blocked16c}) {
    const std::string f = tensor_format_name(b);
    for (Dims x : {Dims{2, 32, 5, 7}, Dims{1, 48, 28, 28}, Dims{1, 32, 3, 4, 5}}) {
      Dims s = x;
      std::fill(s.begin() + 2, s.end(), 1);
      const std::string what = f + " x " + std::to_string(x[1]) + "x" + std::to_string(x[2]);
      check_in_formats(gate, {s, x}, {kPlain, b}, {{kPlain, b}, {b}}, what + ", plain scale");
      check_in_formats(gate, {s, x}, {b, b}, {{b, b}, {b}}, what + ", blocked scale");
      check_in_formats(add, {x, x}, {b, kPlain}, {{b, b}, {b}}, what + ", plain operand");
      Dims one = x;
      one[1] = 1;
      check_in_formats(add, {x, one}, {b, kPlain}, {{b, kPlain}, {b}}, what + ", one channel");
    }
    check_in_formats(gate, {{1, 20, 1, 1}, {1, 20, 5, 7}}, {kPlain, b}, {{kPlain, kPlain}, {kPlain}},
                     f + ": 20 channels");
  }
}

TEST(VecPointwise, DoesNotApplyToFloorDivisionOrModulo) {
  // Rounding a float quotient is not the reference's rounding of a double one.
  for (ElementwiseOp op : {ElementwiseOp::FloorDiv, ElementwiseOp::TruncDiv, ElementwiseOp::Mod}) {
    OneLayer l = fused({binary_instr(op, kIn, kIn + 1)});
    EXPECT_FALSE(row(LayerKind::FusedPointwise, "vec").runs(l.info({{4}, {4}}), nullptr))
        << elementwise_op_name(op);
  }
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
