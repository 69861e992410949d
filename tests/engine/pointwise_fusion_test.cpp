// The builder's pointwise fusion across Float32 and Bool: comparisons, logical ops, selects and casts join
// the float math around them in one FusedPointwise program, which the CPU's vec kernel runs (GPT-2's causal
// mask was an `and` and a `where` run by the reference kernels).

#include <limits>

#include "engine_test_util.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;

/// The plan's layers other than constants.
std::vector<PlanLayerInfo> compute_layers(const Plan& plan) {
  std::vector<PlanLayerInfo> out;
  for (const auto& l : plan.layers()) {
    if (l.kind != LayerKind::Constant) out.push_back(l);
  }
  return out;
}

HostTensor bools(const Dims& dims, std::mt19937& rng) {
  HostTensor t(DType::Bool, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, static_cast<double>(rng() & 1u));
  return t;
}

TEST(EnginePointwiseFusion, CausalMaskAndThenWhereIsOneVecLayer) {
  std::mt19937 rng(71);
  const int64_t s = 8;
  HostTensor causal(DType::Bool, {1, 1, s, s});
  for (int64_t i = 0; i < s * s; ++i) causal.set_from_double(i, i % s <= i / s ? 1.0 : 0.0);
  Network net;
  Tensor* pad = net.add_input("pad", DType::Bool, {1, 1, 1, s});
  Tensor* mask =
      net.add_elementwise("and", net.add_constant("causal", Weights(causal)), pad, ElementwiseOp::And);
  Tensor* y =
      net.add_select("where", mask, net.add_constant("zero", HostTensor::from_floats({0.0f}, {})),
                     net.add_constant("min", HostTensor::from_floats({-3.4028234663852886e+38f}, {})));
  net.mark_output(y);
  auto plan = build(net);
  auto layers = compute_layers(*plan);
  ASSERT_EQ(layers.size(), 1u);
  EXPECT_EQ(layers[0].kind, LayerKind::FusedPointwise);
  if (plan->backend_name() == "cpu") {
    EXPECT_EQ(layers[0].tactic, "vec");
  }
  HostTensor p = bools({1, 1, 1, s}, rng);
  std::vector<double> want;
  for (int64_t i = 0; i < s * s; ++i) {
    const bool keep = causal.get_as_double(i) != 0 && p.get_as_double(i % s) != 0;
    want.push_back(keep ? 0.0 : -3.4028234663852886e+38);
  }
  expect_close(run(plan, {{"pad", p}})[0], want, 0, 0, "causal mask");  // a select picks: exact
}

/// out = where(x * 2 > y and pad, x, -100) + 1: float math, a comparison, a logical op, a select and float
/// math again, as one linear chain.
void add_compare_select_chain(Network& net) {
  Tensor* x = net.add_input("x", DType::Float32, {3, 40});
  Tensor* y = net.add_input("y", DType::Float32, {40});
  Tensor* pad = net.add_input("pad", DType::Bool, {3, 1});
  Tensor* t = net.add_elementwise("mul", x, net.add_constant("two", HostTensor::from_floats({2.0f}, {})),
                                  ElementwiseOp::Mul);
  t = net.add_elementwise("gt", t, y, ElementwiseOp::Greater);
  t = net.add_elementwise("and", t, pad, ElementwiseOp::And);
  t = net.add_select("where", t, x, net.add_constant("low", HostTensor::from_floats({-100.0f}, {})));
  t = net.add_elementwise("add", t, net.add_constant("one", HostTensor::from_floats({1.0f}, {})),
                          ElementwiseOp::Add);
  net.mark_output(t);
}

std::vector<double> compare_select_want(const HostTensor& x, const HostTensor& y, const HostTensor& pad) {
  std::vector<double> want;
  for (int64_t i = 0; i < 120; ++i) {
    const float xv = static_cast<float>(x.get_as_double(i));
    const bool pick =
        2.0f * xv > static_cast<float>(y.get_as_double(i % 40)) && pad.get_as_double(i / 40) != 0;
    want.push_back(static_cast<float>((pick ? xv : -100.0f) + 1.0f));
  }
  return want;
}

TEST(EnginePointwiseFusion, CompareLogicalSelectAndMathFuse) {
  std::mt19937 rng(72);
  Network net;
  add_compare_select_chain(net);
  auto plan = build(net);
  auto layers = compute_layers(*plan);
  ASSERT_EQ(layers.size(), 1u) << "layers left after fusion";
  EXPECT_EQ(layers[0].kind, LayerKind::FusedPointwise);
  if (plan->backend_name() == "cpu") {
    EXPECT_EQ(layers[0].tactic, "vec");
  }
  HostTensor x = random_tensor(DType::Float32, {3, 40}, rng, -2, 2),
             y = random_tensor(DType::Float32, {40}, rng, -2, 2);
  HostTensor pad = bools({3, 1}, rng);
  // Every step is exact or one fp32 rounding, in the same order as the float computation above: exact.
  expect_close(run(plan, {{"x", x}, {"y", y}, {"pad", pad}})[0], compare_select_want(x, y, pad), 0, 0,
               "chain");
}

TEST(EnginePointwiseFusion, MixedChainInFp16KeepsItsBools) {
  // In an fp16 build the chain's Float32 tensors become fp16 and its Bools stay: the fused layer reads a Bool
  // input and fp16 values. fp16 against the fp32 computation: 1e-2 (x and x + 1 rounded to fp16; the
  // comparison of 2x with y in fp16 may flip where they are within fp16's rounding, so those are left out).
  std::mt19937 rng(73);
  BuilderConfig config;
  config.precisions = {Precision::FP32, Precision::FP16};
  Network net;
  add_compare_select_chain(net);
  auto plan = build(net, config);
  HostTensor x = random_tensor(DType::Float32, {3, 40}, rng, -2, 2),
             y = random_tensor(DType::Float32, {40}, rng, -2, 2);
  HostTensor pad = bools({3, 1}, rng);
  const HostTensor got = run(plan, {{"x", x}, {"y", y}, {"pad", pad}})[0];
  const std::vector<double> want = compare_select_want(x, y, pad);
  int compared = 0;
  for (int64_t i = 0; i < 120; ++i) {
    if (std::fabs(2 * x.get_as_double(i) - y.get_as_double(i % 40)) < 0.01) continue;
    EXPECT_NEAR(got.get_as_double(i), want[static_cast<size_t>(i)], 1e-2 + 1e-2 * std::fabs(want[i])) << i;
    ++compared;
  }
  EXPECT_GT(compared, 100);
}

TEST(EnginePointwiseFusion, IntegerChainFusesExactlyAndStopsAtACastToFloat) {
  // Bucket-like int64 math as one linear chain: where(n < 12, min((|n - m| floor_div -3) + 8, 15), m) mod 7,
  // then a cast to Float32, which ends the chain, as the comparison (a Bool output) stays out of it. Values
  // beyond 2^53 and at the extremes among the positions: exact only in int64 (wrapping like torch).
  const int64_t s = 9, big = (int64_t{1} << 53) + 1, lowest = std::numeric_limits<int64_t>::lowest();
  Network net;
  Tensor* m = net.add_input("m", DType::Int64, {s, 1});
  Tensor* n = net.add_input("n", DType::Int64, {1, s});
  auto scalar = [&](const std::string& name, int64_t v) {
    return net.add_constant(name, Weights(HostTensor::from_int64s({v}, {})));
  };
  Tensor* t = net.add_elementwise("sub", n, m, ElementwiseOp::Sub);
  t = net.add_unary("abs", t, UnaryOp::Abs);
  t = net.add_elementwise("floor_div", t, scalar("minus3", -3), ElementwiseOp::FloorDiv);
  t = net.add_elementwise("add", t, scalar("eight", 8), ElementwiseOp::Add);
  t = net.add_elementwise("min", t, scalar("buckets", 15), ElementwiseOp::Min);
  Tensor* small = net.add_elementwise("lt", n, scalar("twelve", 12), ElementwiseOp::Less);
  t = net.add_select("where", small, t, m);
  Tensor* bucket = net.add_elementwise("mod", t, scalar("seven", 7), ElementwiseOp::Mod);
  net.mark_output(bucket);
  net.mark_output(net.add_cast("to_float", bucket, DType::Float32));
  auto plan = build(net);
  auto layers = compute_layers(*plan);
  ASSERT_EQ(layers.size(), 3u);  // lt, the fused chain, the cast
  int fused = 0;
  for (const auto& l : layers) {
    fused += l.kind == LayerKind::FusedPointwise;
    if (plan->backend_name() == "cpu") EXPECT_EQ(l.tactic, "vec") << l.name;
  }
  EXPECT_EQ(fused, 1);
  const std::vector<int64_t> mv = {0, 1, -5, 30, big, -big, lowest, 7, 100};
  const std::vector<int64_t> nv = {3, 0, big + 2, -40, lowest, 12, -1, 8, 2};
  const auto outs =
      run(plan, {{"m", HostTensor::from_int64s(mv, {s, 1})}, {"n", HostTensor::from_int64s(nv, {1, s})}});
  ASSERT_EQ(outs[0].dtype(), DType::Int64);
  const auto floor_div = [](int64_t x, int64_t d) {
    return x / d - (x % d != 0 && ((x < 0) != (d < 0)) ? 1 : 0);
  };
  for (int64_t i = 0; i < s * s; ++i) {
    const int64_t mi = mv[i / s], ni = nv[i % s];
    const uint64_t diff = static_cast<uint64_t>(ni) - static_cast<uint64_t>(mi);
    const int64_t a =
        static_cast<int64_t>(diff) < 0 ? static_cast<int64_t>(0 - diff) : static_cast<int64_t>(diff);
    const int64_t picked = ni < 12 ? std::min<int64_t>(floor_div(a, -3) + 8, 15) : mi;
    int64_t b = picked % 7;
    if (b < 0) b += 7;
    EXPECT_EQ(outs[0].data_as<int64_t>()[i], b) << i;
    EXPECT_EQ(outs[1].data_as<float>()[i], static_cast<float>(b)) << i;
  }
}

}  // namespace
}  // namespace kiln::engine
