// The vec pointwise kernels' comparisons, logical ops, selects and Float32 <-> Bool casts
// (pointwise/logic.cpp), alone and in fused programs with float math, against the reference kernel.
//
// Tolerance: none for comparisons, logical ops, selects and casts (a Bool output and a selected value must
// be the reference's bytes, NaN, infinities and -0.0 included). Programs that also do float math compare
// their float outputs with allclose(rtol=1e-4, atol=1e-5) as pointwise_test.cpp does (float vs the
// reference's double), on values kept away from the comparisons' thresholds so that no element's truth value
// can flip.

#include <cstring>

#include "engine/backends/cpu/kernels/pointwise_exact.h"
#include "engine/pointwise_programs.h"

namespace kiln::engine::cpu::testing {
namespace {

using namespace engine::testing::programs;
const float kNan = std::nanf(""), kInf = INFINITY;

/// Random floats in [-2, 2) with specials among them: NaN, +-inf, +-0.0 and repeats of a neighbour's value
/// (so equal operands meet).
Operand special_floats(const Dims& dims, uint32_t seed) {
  std::vector<float> v = random_floats(static_cast<size_t>(numel(dims)), seed, -2.0f, 2.0f);
  const float specials[] = {kNan, kInf, -kInf, 0.0f, -0.0f, 1.0f};
  for (size_t i = 0; i < v.size(); ++i) {
    if ((i + seed) % 5 == 0) v[i] = specials[(i / 5 + seed) % 6];
    if ((i + seed) % 7 == 3 && i > 0) v[i] = v[i - 1];
  }
  return floats(dims, v);
}

std::vector<float> as_floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(VecPointwiseLogic, EachComparisonExactWithNanInfAndBroadcast) {
  using E = ElementwiseOp;
  for (E op : {E::Equal, E::NotEqual, E::Less, E::LessEqual, E::Greater, E::GreaterEqual}) {
    const Layer l = single(LayerKind::Elementwise, ElementwiseParams{op});
    const std::string name = elementwise_op_name(op);
    // Same shape (long enough for several blocks and a tail), a row broadcast against a column (gathered), a
    // scalar, and a per-channel [C, 1, 1] operand (runs).
    expect_exact(l, {special_floats({3, 701}, 1), special_floats({3, 701}, 2)}, name + " same shape");
    expect_exact(l, {special_floats({5, 1, 9}, 3), special_floats({4, 1}, 4)}, name + " both broadcast");
    expect_exact(l, {special_floats({33}, 5), floats({}, {0.0f})}, name + " scalar zero");
    expect_exact(l, {special_floats({2, 6, 5, 7}, 6), special_floats({6, 1, 1}, 7)}, name + " per channel");
  }
}

TEST(VecPointwiseLogic, LogicalOpsOnBools) {
  using E = ElementwiseOp;
  for (E op : {E::And, E::Or, E::Xor, E::Equal, E::NotEqual}) {
    const Layer l = single(LayerKind::Elementwise, ElementwiseParams{op});
    const std::string name = elementwise_op_name(op);
    expect_exact(l, {random_bools({4, 300}, 11), random_bools({4, 300}, 12)}, name);
    // BERT's padding mask: [1, 1, S, 1] and [1, 1, 1, S] into [1, 1, S, S].
    expect_exact(l, {random_bools({1, 1, 128, 1}, 13), random_bools({1, 1, 1, 128}, 14)}, name + " outer");
  }
  expect_exact(single(LayerKind::Unary, UnaryParams{UnaryOp::Not}), {random_bools({1000}, 15)}, "not");
}

TEST(VecPointwiseLogic, IsNanIsInf) {
  for (UnaryOp op : {UnaryOp::IsNan, UnaryOp::IsInf}) {
    expect_exact(single(LayerKind::Unary, UnaryParams{op}), {special_floats({2, 513}, 21)},
                 unary_op_name(op));
  }
}

TEST(VecPointwiseLogic, SelectPicksExactlyWithBroadcastConditions) {
  const Layer l = single(LayerKind::Select, SelectParams{});
  // The condition broadcast every way the kernel reads an operand: as it is, in runs ([2, 3, 1, 1] of
  // [2, 3, 5, 7]), repeated per period ([7]), gathered ([2, 1, 5, 1]); then / else with NaN, inf and -0.0.
  const Dims y = {2, 3, 5, 7};
  for (const Dims& c : {Dims{2, 3, 5, 7}, Dims{2, 3, 1, 1}, Dims{7}, Dims{2, 1, 5, 1}, Dims{}}) {
    expect_exact(l, {random_bools(c, 31), special_floats(y, 32), special_floats({3, 1, 1}, 33)},
                 "condition of " + std::to_string(c.size()) + " dims");
  }
  // Condition, then and else all broadcast: [3, 1] x [1, 4] x [] -> [3, 4].
  expect_exact(l, {random_bools({3, 1}, 34), special_floats({1, 4}, 35), floats({}, {-kInf})},
               "all broadcast");
}

TEST(VecPointwiseLogic, CastsBetweenFloatAndBool) {
  // To Bool: NaN, infinities and -0.0 among the values (NaN is true, -0.0 false); back to Float32: 0 and 1.
  expect_exact(single(LayerKind::Cast, CastParams{DType::Bool}), {special_floats({3, 333}, 41)},
               "f32 to bool");
  expect_exact(single(LayerKind::Cast, CastParams{DType::Float32}), {random_bools({3, 333}, 42)},
               "bool to f32");
}

TEST(VecPointwiseLogic, GptCausalMaskFusesToOneExactProgram) {
  // GPT-2's mask as the builder fuses it: and(causal [1, 1, S, S] (a constant), padding [1, 1, 1, S]) then
  // where(mask, 0, -3.4e38), both constants one-element weights.
  const int64_t s = 128;
  HostTensor causal(DType::Bool, {1, 1, s, s});
  for (int64_t i = 0; i < s; ++i) {
    for (int64_t j = 0; j < s; ++j) causal.set_from_double(i * s + j, j <= i ? 1.0 : 0.0);
  }
  const Layer l = fused({ew(ElementwiseOp::And, kW, kIn), select(kT, kW + 1, kW + 2)},
                        {Weights("causal", causal), Weights(HostTensor::from_floats({0.0f}, {})),
                         Weights(HostTensor::from_floats({-3.4028234663852886e+38f}, {}))});
  expect_exact(l, {random_bools({1, 1, 1, s}, 51)}, "causal mask");
}

TEST(VecPointwiseLogic, FusedCompareSelectAndFloatMath) {
  // y = where(x * w > b, exp(x), -x) + 1 with w per column: float math around a comparison and a select. The
  // inputs keep |x * w - b| >= 0.01, so no comparison sits near a tie where float and double could disagree.
  std::vector<float> x = random_floats(4 * 250, 61, -2.0f, 2.0f), b = random_floats(250, 62, -1.0f, 1.0f);
  std::vector<float> w = random_floats(250, 63, 0.5f, 1.5f);
  for (size_t i = 0; i < x.size(); ++i) {
    const float d = x[i] * w[i % 250] - b[i % 250];
    if (std::fabs(d) < 0.01f) x[i] += 0.05f;
  }
  const Layer l =
      fused({ew(ElementwiseOp::Mul, kIn, kW), ew(ElementwiseOp::Greater, kT, kIn + 1), un(UnaryOp::Exp, kIn),
             un(UnaryOp::Neg, kIn), select(kT + 1, kT + 2, kT + 3), ew(ElementwiseOp::Add, kT + 4, kW + 1)},
            {Weights("w", HostTensor::from_floats(w, {250})), Weights(HostTensor::from_floats({1.0f}, {}))});
  const std::vector<Operand> in = {floats({4, 250}, x), floats({250}, b)};
  const std::vector<float> want = as_floats(run_layer(l, "ref", in, 1));
  for (int threads : {1, 2}) {
    expect_allclose(as_floats(run_layer(l, "vec", in, threads)), want, 1e-4, 1e-5, "compare, select, math");
  }
  // A Bool result out of float math, mixed with a Bool input: ((x + 1) < 2b) and not(isnan(x)) or m. The
  // NaNs and infinities of special_floats reach the comparison; exact.
  const Layer m =
      fused({ew(ElementwiseOp::Add, kIn, kW), ew(ElementwiseOp::Mul, kIn + 1, kW + 1),
             ew(ElementwiseOp::Less, kT, kT + 1), un(UnaryOp::IsNan, kIn), un(UnaryOp::Not, kT + 3),
             ew(ElementwiseOp::And, kT + 2, kT + 4), ew(ElementwiseOp::Or, kT + 5, kIn + 2)},
            {Weights(HostTensor::from_floats({1.0f}, {})), Weights(HostTensor::from_floats({2.0f}, {}))});
  expect_exact(m, {special_floats({3, 400}, 64), special_floats({400}, 65), random_bools({3, 1}, 66)},
               "bool out of float math");
  // A Bool cast to Float32 used as a number, and a float cast to Bool as a condition.
  const Layer c = fused({cast(DType::Float32, kIn), ew(ElementwiseOp::Mul, kT, kIn + 1),
                         cast(DType::Bool, kIn + 1), select(kT + 2, kT + 1, kW)},
                        {Weights(HostTensor::from_floats({-5.0f}, {}))});
  expect_exact(c, {random_bools({2, 300}, 67), special_floats({2, 300}, 68)}, "casts inside a program");
}

TEST(VecPointwiseLogic, RefusesWhatItDoesNotRun) {
  std::string why;
  const Layer f64 = single(LayerKind::Elementwise, ElementwiseParams{ElementwiseOp::Less});
  LayerInfo li = info_of(f64, {Operand{DType::Float64, {4}, std::vector<uint8_t>(32)},
                               Operand{DType::Float64, {4}, std::vector<uint8_t>(32)}});
  EXPECT_FALSE(row(LayerKind::Elementwise, "vec").runs(li, &why));
  EXPECT_NE(why.find("f64"), std::string::npos) << why;
  // Rounding through f16 inside a float program is not a copy.
  const Layer via_half = fused({cast(DType::Float16, kIn), cast(DType::Float32, kT)});
  why.clear();
  EXPECT_FALSE(
      row(LayerKind::FusedPointwise, "vec").runs(info_of(via_half, {floats({4}, {1, 2, 3, 4})}), &why));
  EXPECT_NE(why.find("cast to f16"), std::string::npos) << why;
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
