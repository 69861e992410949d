// The vec pointwise kernels' integer instructions (pointwise/integer.cpp): Int64 and Int32 arithmetic,
// comparisons, abs / neg / sign, selects and casts, alone and in fused programs, against the reference kernel
// byte for byte, and the reference's integer semantics against hand-computed values (torch's: truncating and
// flooring division, the divisor's sign for mod, wrap-around, exact beyond 2^53).
//
// Tolerance: none. Integer results are exact in both kernels (int64 lanes, never float or double), and the
// casts to Float32 round the same way in both (to double, then to float).

#include <limits>

#include "engine/backends/cpu/kernels/pointwise_exact.h"
#include "engine/pointwise_programs.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::testing {
namespace {

using namespace engine::testing::programs;
using E = ElementwiseOp;
constexpr int64_t kMin = std::numeric_limits<int64_t>::lowest(), kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t k253 = int64_t{1} << 53;

template <class T>
Operand ints(DType dtype, const Dims& dims, const std::vector<T>& v) {
  Operand o{dtype, dims, std::vector<uint8_t>(v.size() * sizeof(T))};
  std::memcpy(o.bytes.data(), v.data(), o.bytes.size());
  return o;
}
Operand i64(const Dims& dims, const std::vector<int64_t>& v) { return ints(DType::Int64, dims, v); }

/// Random int64s of all sizes (small ones, around 2^31, beyond 2^53, up to the extremes) with specials among
/// them: the lowest and highest values, -1, 0, 1, 2^53 + 1, repeats of a neighbour. `nonzero`: no zeros (a
/// divisor).
std::vector<int64_t> special_int64s(size_t n, uint32_t seed, bool nonzero = false) {
  std::mt19937_64 gen(seed);
  const int64_t specials[] = {kMin, kMax, -1, 0, 1, k253 + 1, -k253 - 3, 7, -7, 2};
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = gen();
    const int shift = static_cast<int>(r % 4) * 16;  // magnitudes up to 2^15, 2^31, 2^47 or 2^63
    v[i] = static_cast<int64_t>(gen()) >> (48 - std::min(shift, 48));
    if ((i + seed) % 5 == 0) v[i] = specials[(i / 5 + seed) % 10];
    if ((i + seed) % 7 == 3 && i > 0) v[i] = v[i - 1];
    if (nonzero && v[i] == 0) v[i] = -3;
  }
  return v;
}
Operand special_i64(const Dims& dims, uint32_t seed, bool nonzero = false) {
  return i64(dims, special_int64s(static_cast<size_t>(numel(dims)), seed, nonzero));
}

/// The same as Int32 (each truncated to 32 bits, so INT32_MIN, INT32_MAX and -1 among them).
Operand special_i32(const Dims& dims, uint32_t seed, bool nonzero = false) {
  const std::vector<int64_t> w = special_int64s(static_cast<size_t>(numel(dims)), seed, nonzero);
  std::vector<int32_t> v(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    v[i] = static_cast<int32_t>(w[i]);
    if (w[i] == kMin) v[i] = std::numeric_limits<int32_t>::lowest();
    if (w[i] == kMax) v[i] = std::numeric_limits<int32_t>::max();
    if (nonzero && v[i] == 0) v[i] = 5;
  }
  return ints(DType::Int32, dims, v);
}

std::vector<int64_t> as_int64s(const std::vector<uint8_t>& bytes) {
  std::vector<int64_t> v(bytes.size() / 8);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

Layer binary_layer(E op) { return single(LayerKind::Elementwise, ElementwiseParams{op}); }

bool divides(E op) { return op == E::Div || op == E::TruncDiv || op == E::FloorDiv || op == E::Mod; }

TEST(ReferenceIntegerSemantics, ExactBeyond2To53WrappingAndTorchRounding) {
  // Each row: a op b = want, computed by hand (torch's results for int64 tensors).
  struct Case {
    E op;
    int64_t a, b, want;
  };
  const Case cases[] = {
      {E::Add, k253 + 1, 2, k253 + 3},  // double rounds 2^53 + 1 to 2^53
      {E::Sub, -k253 - 1, 2, -k253 - 3},
      {E::Mul, k253 + 1, 3, 3 * k253 + 3},
      {E::Add, kMax, 1, kMin},  // wraps
      {E::Mul, kMin, -1, kMin},
      {E::Div, kMin, -1, kMin},
      {E::FloorDiv, kMin, -1, kMin},
      {E::Mod, kMin, -1, 0},
      {E::Div, -7, 2, -3},
      {E::TruncDiv, 7, -2, -3},
      {E::FloorDiv, -7, 2, -4},
      {E::FloorDiv, 7, -2, -4},
      {E::FloorDiv, -8, 2, -4},
      {E::Mod, -7, 2, 1},
      {E::Mod, 7, -2, -1},
      {E::Mod, -8, 2, 0},
      {E::Div, kMax, k253 + 1, 1023},  // double gives 1024
      {E::Mod, kMax, 10, 7},           // double gives 8
      {E::Max, k253 + 1, k253, k253 + 1},
      {E::Min, -k253 - 1, -k253, -k253 - 1},
      {E::Pow, 3, 40, static_cast<int64_t>(12157665459056928801ull)},  // 3^40 wraps
      {E::NotEqual, k253 + 1, k253, 1},                                // double compares them equal
      {E::Less, k253, k253 + 1, 1},
  };
  for (const Case& c : cases) {
    const std::vector<uint8_t> got =
        run_layer(binary_layer(c.op), "ref", {i64({1}, {c.a}), i64({1}, {c.b})}, 1);
    const int64_t value = got.size() == 1 ? got[0] : as_int64s(got).at(0);
    EXPECT_EQ(value, c.want) << elementwise_op_name(c.op) << "(" << c.a << ", " << c.b << ")";
  }
  // abs and neg of the lowest value wrap to it, as torch's.
  for (UnaryOp op : {UnaryOp::Abs, UnaryOp::Neg}) {
    const auto got =
        as_int64s(run_layer(single(LayerKind::Unary, UnaryParams{op}), "ref", {i64({1}, {kMin})}, 1));
    EXPECT_EQ(got.at(0), kMin) << unary_op_name(op);
  }
  // An int64 cast to Int64 keeps 2^53 + 1.
  const auto same = as_int64s(
      run_layer(single(LayerKind::Cast, CastParams{DType::Int64}), "ref", {i64({1}, {k253 + 1})}, 1));
  EXPECT_EQ(same.at(0), k253 + 1);
}

TEST(VecPointwiseInteger, EachInt64OpExactWithEdgesAndBroadcast) {
  for (E op : {E::Add, E::Sub, E::Mul, E::Div, E::TruncDiv, E::FloorDiv, E::Mod, E::Max, E::Min, E::Equal,
               E::NotEqual, E::Less, E::LessEqual, E::Greater, E::GreaterEqual}) {
    const Layer l = binary_layer(op);
    const std::string name = elementwise_op_name(op);
    const bool nz = divides(op);
    // Same shape (several blocks and a tail), a row broadcast against a column (gathered), a scalar, a
    // per-channel [C, 1, 1] operand (runs) and a [C] one (a period).
    expect_exact(l, {special_i64({3, 701}, 1), special_i64({3, 701}, 2, nz)}, name + " same shape");
    expect_exact(l, {special_i64({5, 1, 9}, 3), special_i64({4, 1}, 4, nz)}, name + " both broadcast");
    expect_exact(l, {special_i64({33}, 5), i64({}, {-1})}, name + " by scalar -1");
    expect_exact(l, {special_i64({2, 6, 5, 7}, 6), special_i64({6, 1, 1}, 7, nz)}, name + " per channel");
    expect_exact(l, {special_i64({40, 7}, 8), special_i64({7}, 9, nz)}, name + " per period");
  }
}

TEST(VecPointwiseInteger, EachInt32OpExactAndWrapping) {
  for (E op : {E::Add, E::Sub, E::Mul, E::Div, E::FloorDiv, E::Mod, E::Max, E::Min, E::Less, E::Equal}) {
    const Layer l = binary_layer(op);
    const std::string name = elementwise_op_name(op);
    expect_exact(l, {special_i32({3, 701}, 11), special_i32({3, 701}, 12, divides(op))}, name + " i32");
    expect_exact(l, {special_i32({5, 1, 9}, 13), special_i32({4, 1}, 14, divides(op))}, name + " i32 bcast");
  }
  // INT32_MAX + 1 wraps to INT32_MIN (the lanes hold 2^31; the store wraps).
  const std::vector<int32_t> top = {std::numeric_limits<int32_t>::max()};
  const std::vector<uint8_t> sum =
      run_layer(binary_layer(E::Add), "vec",
                {ints(DType::Int32, {1}, top), ints(DType::Int32, {1}, std::vector<int32_t>{1})}, 1);
  int32_t wrapped = 0;
  std::memcpy(&wrapped, sum.data(), 4);
  EXPECT_EQ(wrapped, std::numeric_limits<int32_t>::lowest());
}

TEST(VecPointwiseInteger, AbsNegSignSelectExact) {
  for (UnaryOp op : {UnaryOp::Abs, UnaryOp::Neg, UnaryOp::Sign}) {
    expect_exact(single(LayerKind::Unary, UnaryParams{op}), {special_i64({2, 513}, 21)}, unary_op_name(op));
    expect_exact(single(LayerKind::Unary, UnaryParams{op}), {special_i32({513}, 22)},
                 std::string(unary_op_name(op)) + " i32");
  }
  const Layer sel = single(LayerKind::Select, SelectParams{});
  for (const Dims& c : {Dims{2, 3, 5, 7}, Dims{2, 3, 1, 1}, Dims{7}, Dims{2, 1, 5, 1}, Dims{}}) {
    expect_exact(sel, {random_bools(c, 31), special_i64({2, 3, 5, 7}, 32), special_i64({3, 1, 1}, 33)},
                 "select, condition of " + std::to_string(c.size()) + " dims");
  }
}

TEST(VecPointwiseInteger, CastsBetweenIntegersFloatsAndBools) {
  const auto cast_to = [](DType to) { return single(LayerKind::Cast, CastParams{to}); };
  // The attention mask's int64 -> bool, int64 -> float (2^53 + 1 and the extremes round), float -> int64
  // (NaN, infinities and values beyond the range saturate, fractions truncate), bool -> int64, and between
  // integer widths (saturating, as the reference's store).
  expect_exact(cast_to(DType::Bool), {special_i64({3, 333}, 41)}, "i64 to bool");
  expect_exact(cast_to(DType::Float32), {special_i64({3, 333}, 42)}, "i64 to f32");
  expect_exact(cast_to(DType::Float32), {special_i32({3, 333}, 43)}, "i32 to f32");
  std::vector<float> f = random_floats(999, 44, -3e9f, 3e9f);
  const float specials[] = {NAN, INFINITY, -INFINITY, 9.3e18f, -9.3e18f, 9.2233715e18f, -0.7f, 0.7f, -2.5f};
  for (size_t i = 0; i < f.size(); i += 7) f[i] = specials[(i / 7) % 9];
  expect_exact(cast_to(DType::Int64), {floats({999}, f)}, "f32 to i64");
  expect_exact(cast_to(DType::Int32), {floats({999}, f)}, "f32 to i32");
  expect_exact(cast_to(DType::Int64), {random_bools({999}, 45)}, "bool to i64");
  expect_exact(cast_to(DType::Int32), {special_i64({999}, 46)}, "i64 to i32");
  expect_exact(cast_to(DType::Int64), {special_i32({999}, 47)}, "i32 to i64");
  expect_exact(cast_to(DType::Int64), {special_i64({999}, 48)}, "i64 to i64");
}

TEST(VecPointwiseInteger, DivisionByZeroIsAnErrorAsInTheReference) {
  for (E op : {E::Div, E::FloorDiv, E::Mod}) {
    const std::vector<Operand> in = {special_i64({600}, 51), i64({2}, {3, 0})};
    for (const char* tactic : {"ref", "vec"}) {
      EXPECT_THROW(run_layer(binary_layer(op), tactic, in, 2), kiln::Error)
          << elementwise_op_name(op) << " " << tactic;
    }
  }
}

TEST(VecPointwiseInteger, RelativePositionBucketsFuseToOneExactProgram) {
  // T5's bucket arithmetic on [S, S] relative positions m - n: abs, a comparison with max_exact, min with
  // the bucket count, where, and a cast to float for the log; then a float and int mixed select back to int.
  const int64_t s = 37;
  std::vector<int64_t> m(s), n(s);
  for (int64_t i = 0; i < s; ++i) m[i] = n[i] = i;
  const Layer l =
      fused({ew(E::Sub, kIn + 1, kIn), un(UnaryOp::Abs, kT), ew(E::Less, kT + 1, kW),
             ew(E::FloorDiv, kT + 1, kW + 1), ew(E::Add, kT + 3, kW), ew(E::Min, kT + 4, kW + 2),
             select(kT + 2, kT + 1, kT + 5), ew(E::Mod, kT, kW + 1), ew(E::Mul, kT + 7, kT + 6),
             cast(DType::Float32, kT + 8)},
            {Weights(HostTensor::from_int64s({8}, {})), Weights(HostTensor::from_int64s({-3}, {})),
             Weights(HostTensor::from_int64s({15}, {}))});
  expect_exact(l, {i64({s, 1}, m), i64({1, s}, n)}, "buckets");
  // The same program on values beyond 2^53 and at the extremes (wrapping in the sub and mul).
  expect_exact(l, {special_i64({s, 1}, 61), special_i64({1, s}, 62)}, "buckets, large values");
  // An Int32 output from a Bool and an int64 program cast down.
  const Layer c = fused({cast(DType::Int64, kIn), ew(E::Mul, kT, kIn + 1), cast(DType::Int32, kT + 1)});
  expect_exact(c, {random_bools({4, 300}, 63), special_i64({300}, 64)}, "bool times int64 to int32");
}

TEST(VecPointwiseInteger, RefusesIntegerPowSayingWhy) {
  std::string why;
  const Layer l = binary_layer(E::Pow);
  EXPECT_FALSE(row(LayerKind::Elementwise, "vec")
                   .runs(info_of(l, {i64({4}, {1, 2, 3, 4}), i64({4}, {1, 2, 3, 4})}), &why));
  EXPECT_NE(why.find("integer pow"), std::string::npos) << why;
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
