// Layer kinds against naive references: elementwise, activation, unary, cast, select, reduce, softmax,
// normalization, cumulative, topk. Tolerances: see check_layer (fp32 1e-4/1e-5; fp16/bf16 1e-2/1e-2).

#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

/// Broadcast binary reference.
std::vector<double> ref_binary(const HostTensor& a, const HostTensor& b, const std::function<double(double, double)>& f) {
  Dims out = a.sizes().size() >= b.sizes().size() ? a.sizes() : b.sizes();
  size_t r = out.size();
  for (size_t k = 0; k < r; ++k) {
    auto at = [&](const Dims& d) { return k + d.size() >= r ? d[k + d.size() - r] : 1; };
    out[k] = std::max(at(a.sizes()), at(b.sizes()));
  }
  int64_t n = 1;
  for (int64_t x : out) n *= x;
  std::vector<double> y(n);
  for (int64_t i = 0; i < n; ++i) {
    auto idx = unravel(i, out);
    y[i] = f(a.get_as_double(ravel_broadcast(idx, a.sizes())), b.get_as_double(ravel_broadcast(idx, b.sizes())));
  }
  return y;
}

TEST(EngineLayers, ElementwiseArithmeticBroadcast) {
  std::mt19937 rng(11);
  struct Op { ElementwiseOp op; std::function<double(double, double)> f; };
  std::vector<Op> ops = {
      {ElementwiseOp::Add, [](double a, double b) { return a + b; }},
      {ElementwiseOp::Sub, [](double a, double b) { return a - b; }},
      {ElementwiseOp::Mul, [](double a, double b) { return a * b; }},
      {ElementwiseOp::Div, [](double a, double b) { return a / b; }},
      {ElementwiseOp::Pow, [](double a, double b) { return std::pow(a, b); }},
      {ElementwiseOp::Max, [](double a, double b) { return std::max(a, b); }},
      {ElementwiseOp::Min, [](double a, double b) { return std::min(a, b); }},
      {ElementwiseOp::FloorDiv, [](double a, double b) { return std::floor(a / b); }},
  };
  for (const auto& o : ops) {
    // Positive operands in [0.5, 2] keep div and pow well conditioned.
    HostTensor a = random_tensor(DType::Float32, {2, 3, 4}, rng, 0.5, 2.0);
    HostTensor b = random_tensor(DType::Float32, {3, 1}, rng, 0.5, 2.0);
    // floor_div jumps at integers; only fp32 is compared exactly enough for it.
    auto precisions = o.op == ElementwiseOp::FloorDiv ? std::vector<TestPrecision>{TestPrecision::FP32} : kAllPrecisions;
    check_layer(elementwise_op_name(o.op), {a, b},
                [&](Network& n, const std::vector<Tensor*>& in) { return n.add_elementwise("", in[0], in[1], o.op); },
                [&](const std::vector<HostTensor>& in) { return ref_binary(in[0], in[1], o.f); }, precisions);
  }
}

TEST(EngineLayers, ElementwiseDynamicShapes) {
  std::mt19937 rng(12);
  HostTensor a = random_tensor(DType::Float32, {4, 6}, rng), b = random_tensor(DType::Float32, {4, 6}, rng);
  check_layer("add dynamic", {a, b},
              [](Network& n, const std::vector<Tensor*>& in) { return n.add_elementwise("", in[0], in[1], ElementwiseOp::Add); },
              [](const std::vector<HostTensor>& in) { return ref_binary(in[0], in[1], [](double x, double y) { return x + y; }); },
              kAllPrecisions, {0, 1});
}

TEST(EngineLayers, IntegerAndComparisonAndLogical) {
  std::mt19937 rng(13);
  HostTensor a = random_tensor(DType::Int64, {3, 5}, rng, -20, 20);
  HostTensor b = random_tensor(DType::Int64, {5}, rng, 1, 7);
  auto mod = [](double x, double y) { double r = std::fmod(x, y); return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r; };
  check_layer("int mod", {a, b}, [](Network& n, const std::vector<Tensor*>& in) { return n.add_elementwise("", in[0], in[1], ElementwiseOp::Mod); },
              [&](const std::vector<HostTensor>& in) { return ref_binary(in[0], in[1], mod); });
  check_layer("int floordiv", {a, b}, [](Network& n, const std::vector<Tensor*>& in) { return n.add_elementwise("", in[0], in[1], ElementwiseOp::FloorDiv); },
              [&](const std::vector<HostTensor>& in) { return ref_binary(in[0], in[1], [](double x, double y) { return std::floor(x / y); }); });
  check_layer("int div truncates", {a, b}, [](Network& n, const std::vector<Tensor*>& in) { return n.add_elementwise("", in[0], in[1], ElementwiseOp::Div); },
              [&](const std::vector<HostTensor>& in) { return ref_binary(in[0], in[1], [](double x, double y) { return std::trunc(x / y); }); });
  // Integer-valued floats so comparisons are exact at every precision.
  HostTensor x = random_tensor(DType::Float32, {4, 4}, rng, -3, 3), y = random_tensor(DType::Float32, {4}, rng, -3, 3);
  for (auto op : {ElementwiseOp::Equal, ElementwiseOp::NotEqual, ElementwiseOp::Less, ElementwiseOp::LessEqual,
                  ElementwiseOp::Greater, ElementwiseOp::GreaterEqual}) {
    check_layer(elementwise_op_name(op), {x, y},
                [&](Network& n, const std::vector<Tensor*>& in) { return n.add_elementwise("", in[0], in[1], op); },
                [&](const std::vector<HostTensor>& in) {
                  return ref_binary(in[0], in[1], [&](double p, double q) {
                    switch (op) {
                      case ElementwiseOp::Equal: return double(p == q);
                      case ElementwiseOp::NotEqual: return double(p != q);
                      case ElementwiseOp::Less: return double(p < q);
                      case ElementwiseOp::LessEqual: return double(p <= q);
                      case ElementwiseOp::Greater: return double(p > q);
                      default: return double(p >= q);
                    }
                  });
                },
                kAllPrecisions);
  }
  HostTensor p = random_tensor(DType::Bool, {3, 4}, rng, 0, 2), q = random_tensor(DType::Bool, {3, 4}, rng, 0, 2);
  for (auto op : {ElementwiseOp::And, ElementwiseOp::Or, ElementwiseOp::Xor}) {
    check_layer(elementwise_op_name(op), {p, q},
                [&](Network& n, const std::vector<Tensor*>& in) { return n.add_elementwise("", in[0], in[1], op); },
                [&](const std::vector<HostTensor>& in) {
                  return ref_binary(in[0], in[1], [&](double u, double v) {
                    return op == ElementwiseOp::And ? double(u && v) : op == ElementwiseOp::Or ? double(u || v) : double((u != 0) != (v != 0));
                  });
                });
  }
  check_layer("not", {p}, [](Network& n, const std::vector<Tensor*>& in) { return n.add_unary("", in[0], UnaryOp::Not); },
              [](const std::vector<HostTensor>& in) { auto v = values(in[0]); for (auto& x : v) x = x == 0; return v; });
}

TEST(EngineLayers, Activations) {
  std::mt19937 rng(14);
  struct A { ActivationKind k; double alpha, beta; std::function<double(double)> f; };
  std::vector<A> acts = {
      {ActivationKind::Relu, 0, 0, [](double x) { return std::max(x, 0.0); }},
      {ActivationKind::Sigmoid, 0, 0, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {ActivationKind::Tanh, 0, 0, [](double x) { return std::tanh(x); }},
      {ActivationKind::GeluErf, 0, 0, [](double x) { return x * 0.5 * (1 + std::erf(x / std::sqrt(2.0))); }},
      {ActivationKind::GeluTanh, 0, 0, [](double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }},
      {ActivationKind::Silu, 0, 0, [](double x) { return x / (1 + std::exp(-x)); }},
      {ActivationKind::HardSwish, 0, 0, [](double x) { return x * std::clamp(x + 3, 0.0, 6.0) / 6; }},
      {ActivationKind::HardSigmoid, 0.2, 0.5, [](double x) { return std::clamp(0.2 * x + 0.5, 0.0, 1.0); }},
      {ActivationKind::LeakyRelu, 0.1, 0, [](double x) { return x >= 0 ? x : 0.1 * x; }},
      {ActivationKind::Elu, 1.5, 0, [](double x) { return x > 0 ? x : 1.5 * (std::exp(x) - 1); }},
      {ActivationKind::Selu, 0, 0, [](double x) { return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * (std::exp(x) - 1)); }},
      {ActivationKind::Softplus, 20, 2, [](double x) { return 2 * x > 20 ? x : std::log1p(std::exp(2 * x)) / 2; }},
      {ActivationKind::Softsign, 0, 0, [](double x) { return x / (1 + std::fabs(x)); }},
      {ActivationKind::Clip, -0.5, 0.7, [](double x) { return std::clamp(x, -0.5, 0.7); }},
      {ActivationKind::Mish, 0, 0, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }},
  };
  for (const auto& a : acts) {
    HostTensor x = random_tensor(DType::Float32, {3, 7, 5}, rng, -4, 4);
    check_layer(activation_kind_name(a.k), {x},
                [&](Network& n, const std::vector<Tensor*>& in) { return n.add_activation("", in[0], a.k, a.alpha, a.beta); },
                [&](const std::vector<HostTensor>& in) { auto v = values(in[0]); for (auto& e : v) e = a.f(e); return v; },
                kAllPrecisions);
  }
}

TEST(EngineLayers, Unary) {
  std::mt19937 rng(15);
  struct U { UnaryOp op; double lo, hi; std::function<double(double)> f; };
  std::vector<U> ops = {
      {UnaryOp::Exp, -2, 2, [](double x) { return std::exp(x); }},
      {UnaryOp::Log, 0.1, 5, [](double x) { return std::log(x); }},
      {UnaryOp::Sqrt, 0.1, 5, [](double x) { return std::sqrt(x); }},
      {UnaryOp::Rsqrt, 0.2, 5, [](double x) { return 1 / std::sqrt(x); }},
      {UnaryOp::Abs, -3, 3, [](double x) { return std::fabs(x); }},
      {UnaryOp::Neg, -3, 3, [](double x) { return -x; }},
      {UnaryOp::Recip, 0.5, 3, [](double x) { return 1 / x; }},
      {UnaryOp::Erf, -2, 2, [](double x) { return std::erf(x); }},
      {UnaryOp::Sin, -3, 3, [](double x) { return std::sin(x); }},
      {UnaryOp::Cos, -3, 3, [](double x) { return std::cos(x); }},
      {UnaryOp::Tan, -1, 1, [](double x) { return std::tan(x); }},
      {UnaryOp::Asin, -0.9, 0.9, [](double x) { return std::asin(x); }},
      {UnaryOp::Acos, -0.9, 0.9, [](double x) { return std::acos(x); }},
      {UnaryOp::Atan, -3, 3, [](double x) { return std::atan(x); }},
      {UnaryOp::Sinh, -2, 2, [](double x) { return std::sinh(x); }},
      {UnaryOp::Cosh, -2, 2, [](double x) { return std::cosh(x); }},
      {UnaryOp::Expm1, -1, 1, [](double x) { return std::expm1(x); }},
      {UnaryOp::Log1p, -0.5, 2, [](double x) { return std::log1p(x); }},
      {UnaryOp::Sign, -2, 2, [](double x) { return double((x > 0) - (x < 0)); }},
  };
  for (const auto& u : ops) {
    HostTensor x = random_tensor(DType::Float32, {4, 9}, rng, u.lo, u.hi);
    check_layer(unary_op_name(u.op), {x},
                [&](Network& n, const std::vector<Tensor*>& in) { return n.add_unary("", in[0], u.op); },
                [&](const std::vector<HostTensor>& in) { auto v = values(in[0]); for (auto& e : v) e = u.f(e); return v; },
                kAllPrecisions);
  }
  // floor/ceil/round jump at integers and halves: fp32 only.
  for (auto op : {UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Round}) {
    HostTensor x = random_tensor(DType::Float32, {4, 9}, rng, -5, 5);
    check_layer(unary_op_name(op), {x}, [&](Network& n, const std::vector<Tensor*>& in) { return n.add_unary("", in[0], op); },
                [&](const std::vector<HostTensor>& in) {
                  auto v = values(in[0]);
                  for (auto& e : v) e = op == UnaryOp::Floor ? std::floor(e) : op == UnaryOp::Ceil ? std::ceil(e) : std::nearbyint(e);
                  return v;
                });
  }
}

TEST(EngineLayers, CastAndSelect) {
  std::mt19937 rng(16);
  HostTensor x = random_tensor(DType::Float32, {3, 4}, rng, -5, 5);
  check_layer("cast f32->i32", {x}, [](Network& n, const std::vector<Tensor*>& in) { return n.add_cast("", in[0], DType::Int32); },
              [](const std::vector<HostTensor>& in) { auto v = values(in[0]); for (auto& e : v) e = std::trunc(e); return v; });
  check_layer("cast f32->bool", {x}, [](Network& n, const std::vector<Tensor*>& in) { return n.add_cast("", in[0], DType::Bool); },
              [](const std::vector<HostTensor>& in) { auto v = values(in[0]); for (auto& e : v) e = e != 0; return v; });
  HostTensor i = random_tensor(DType::Int64, {3, 4}, rng, -100, 100);
  check_layer("cast i64->f32", {i}, [](Network& n, const std::vector<Tensor*>& in) { return n.add_cast("", in[0], DType::Float32); },
              [](const std::vector<HostTensor>& in) { return values(in[0]); });
  HostTensor c = random_tensor(DType::Bool, {3, 1}, rng, 0, 2);
  HostTensor a = random_tensor(DType::Float32, {3, 4}, rng), b = random_tensor(DType::Float32, {4}, rng);
  check_layer("select", {c, a, b}, [](Network& n, const std::vector<Tensor*>& in) { return n.add_select("", in[0], in[1], in[2]); },
              [](const std::vector<HostTensor>& in) {
                std::vector<double> y(12);
                for (int k = 0; k < 12; ++k) y[k] = in[0].get_as_double(k / 4) ? in[1].get_as_double(k) : in[2].get_as_double(k % 4);
                return y;
              },
              kAllPrecisions);
}

/// Reference reduction over `axes` of x (dims d).
std::vector<double> ref_reduce(const HostTensor& x, const std::vector<int64_t>& axes, ReduceOp op) {
  const Dims& d = x.sizes();
  Dims od = d;
  for (int64_t a : axes) od[a] = 1;
  int64_t on = 1;
  for (int64_t v : od) on *= v;
  std::vector<std::vector<double>> groups(on);
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto idx = unravel(i, d);
    for (int64_t a : axes) idx[a] = 0;
    int64_t o = 0;
    for (size_t k = 0; k < d.size(); ++k) o = o * od[k] + idx[k];
    groups[o].push_back(x.get_as_double(i));
  }
  std::vector<double> y;
  for (auto& g : groups) {
    double r = 0;
    switch (op) {
      case ReduceOp::Sum: for (double v : g) r += v; break;
      case ReduceOp::Mean: for (double v : g) r += v; r /= g.size(); break;
      case ReduceOp::Max: r = *std::max_element(g.begin(), g.end()); break;
      case ReduceOp::Min: r = *std::min_element(g.begin(), g.end()); break;
      case ReduceOp::Prod: r = 1; for (double v : g) r *= v; break;
      case ReduceOp::ArgMax: r = std::max_element(g.begin(), g.end()) - g.begin(); break;
      case ReduceOp::ArgMin: r = std::min_element(g.begin(), g.end()) - g.begin(); break;
      default: break;
    }
    y.push_back(r);
  }
  return y;
}

TEST(EngineLayers, Reduce) {
  std::mt19937 rng(17);
  HostTensor x = random_tensor(DType::Float32, {3, 4, 5}, rng, 0.5, 1.5);
  for (auto op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod}) {
    for (std::vector<int64_t> axes : {std::vector<int64_t>{1}, {0, 2}, {0, 1, 2}}) {
      for (bool keep : {false, true}) {
        check_layer(std::string(reduce_op_name(op)) + " axes " + std::to_string(axes.size()) + (keep ? " keep" : ""), {x},
                    [&](Network& n, const std::vector<Tensor*>& in) { return n.add_reduce("", in[0], op, axes, keep); },
                    [&](const std::vector<HostTensor>& in) { return ref_reduce(in[0], axes, op); }, kAllPrecisions);
      }
    }
  }
  for (auto op : {ReduceOp::ArgMax, ReduceOp::ArgMin}) {
    check_layer(reduce_op_name(op), {x}, [&](Network& n, const std::vector<Tensor*>& in) { return n.add_reduce("", in[0], op, {-1}, false); },
                [&](const std::vector<HostTensor>& in) { return ref_reduce(in[0], {2}, op); });
  }
  check_layer("sum dynamic", {x}, [](Network& n, const std::vector<Tensor*>& in) { return n.add_reduce("", in[0], ReduceOp::Sum, {1}, true); },
              [](const std::vector<HostTensor>& in) { return ref_reduce(in[0], {1}, ReduceOp::Sum); }, {TestPrecision::FP32}, {0});
}

TEST(EngineLayers, SoftmaxAndLogSoftmax) {
  std::mt19937 rng(18);
  HostTensor x = random_tensor(DType::Float32, {2, 5, 7}, rng, -3, 3);
  for (int64_t axis : {0, 1, 2}) {
    for (bool log : {false, true}) {
      check_layer(std::string(log ? "log_softmax" : "softmax") + " axis " + std::to_string(axis), {x},
                  [&](Network& n, const std::vector<Tensor*>& in) { return n.add_softmax("", in[0], axis, log); },
                  [&](const std::vector<HostTensor>& in) {
                    const Dims& d = in[0].sizes();
                    auto st = strides(d);
                    std::vector<double> y(in[0].numel());
                    for (int64_t i = 0; i < in[0].numel(); ++i) {
                      auto idx = unravel(i, d);
                      double sum = 0;
                      for (int64_t j = 0; j < d[axis]; ++j) sum += std::exp(in[0].get_as_double(i + (j - idx[axis]) * st[axis]));
                      double v = in[0].get_as_double(i);
                      y[i] = log ? v - std::log(sum) : std::exp(v) / sum;
                    }
                    return y;
                  },
                  kAllPrecisions, axis == 2 ? std::vector<int>{0} : std::vector<int>{});
    }
  }
}

TEST(EngineLayers, Normalization) {
  std::mt19937 rng(19);
  HostTensor x = random_tensor(DType::Float32, {2, 6, 3, 4}, rng, -2, 2);
  struct N { NormalizationParams::Kind kind; int64_t axis, groups; bool affine; };
  for (N c : {N{NormalizationParams::Layer, 3, 1, true}, N{NormalizationParams::Layer, 1, 1, false},
              N{NormalizationParams::Group, 0, 3, true}, N{NormalizationParams::Instance, 0, 1, true},
              N{NormalizationParams::Group, 0, 2, false}}) {
    int64_t group_size = c.kind == NormalizationParams::Layer ? [&] { int64_t s = 1; for (int64_t k = c.axis; k < 4; ++k) s *= x.sizes()[k]; return s; }()
                         : c.kind == NormalizationParams::Instance ? 12 : 6 / c.groups * 12;
    Dims wshape = c.kind == NormalizationParams::Layer ? Dims(x.sizes().begin() + c.axis, x.sizes().end()) : Dims{6};
    HostTensor scale = random_tensor(DType::Float32, wshape, rng, 0.5, 1.5), bias = random_tensor(DType::Float32, wshape, rng);
    check_layer("normalization kind " + std::to_string(c.kind), {x},
                [&](Network& n, const std::vector<Tensor*>& in) {
                  NormalizationParams p;
                  p.kind = c.kind;
                  p.axis = c.axis;
                  p.groups = c.groups;
                  p.epsilon = 1e-5;
                  return n.add_normalization("", in[0], p, c.affine ? Weights(scale) : Weights(), c.affine ? Weights(bias) : Weights());
                },
                [&](const std::vector<HostTensor>& in) {
                  std::vector<double> v = values(in[0]), y(v.size());
                  for (size_t g0 = 0; g0 < v.size(); g0 += group_size) {
                    double m = 0, var = 0;
                    for (int64_t j = 0; j < group_size; ++j) m += v[g0 + j];
                    m /= group_size;
                    for (int64_t j = 0; j < group_size; ++j) var += (v[g0 + j] - m) * (v[g0 + j] - m);
                    var /= group_size;
                    for (int64_t j = 0; j < group_size; ++j) {
                      int64_t w = c.kind == NormalizationParams::Layer ? j : ((g0 + j) / 12) % 6;
                      double r = (v[g0 + j] - m) / std::sqrt(var + 1e-5);
                      y[g0 + j] = c.affine ? r * scale.get_as_double(w) + bias.get_as_double(w) : r;
                    }
                  }
                  return y;
                },
                kAllPrecisions);
  }
}

TEST(EngineLayers, CumulativeAndTopK) {
  std::mt19937 rng(20);
  HostTensor x = random_tensor(DType::Float32, {3, 6}, rng, 0.5, 1.5);
  for (auto op : {CumulativeParams::Sum, CumulativeParams::Prod, CumulativeParams::Max}) {
    for (bool excl : {false, true}) {
      for (bool rev : {false, true}) {
        CumulativeParams p{op, 1, excl, rev};
        check_layer("cumulative", {x}, [&](Network& n, const std::vector<Tensor*>& in) { return n.add_cumulative("", in[0], p); },
                    [&](const std::vector<HostTensor>& in) {
                      std::vector<double> y(18);
                      for (int r = 0; r < 3; ++r) {
                        double acc = op == CumulativeParams::Sum ? 0 : op == CumulativeParams::Prod ? 1 : -INFINITY;
                        for (int t = 0; t < 6; ++t) {
                          int j = rev ? 5 - t : t;
                          double v = in[0].get_as_double(r * 6 + j);
                          double next = op == CumulativeParams::Sum ? acc + v : op == CumulativeParams::Prod ? acc * v : std::max(acc, v);
                          y[r * 6 + j] = excl ? acc : next;
                          acc = next;
                        }
                      }
                      return y;
                    });
      }
    }
  }
  for (bool largest : {true, false}) {
    for (int out : {0, 1}) {
      check_layer("topk", {x},
                  [&](Network& n, const std::vector<Tensor*>& in) {
                    auto [v, i] = n.add_topk("", in[0], TopKParams{3, 1, largest}, nullptr);
                    return out == 0 ? v : i;
                  },
                  [&](const std::vector<HostTensor>& in) {
                    std::vector<double> y;
                    for (int r = 0; r < 3; ++r) {
                      std::vector<int> idx = {0, 1, 2, 3, 4, 5};
                      std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
                        double va = in[0].get_as_double(r * 6 + a), vb = in[0].get_as_double(r * 6 + b);
                        return largest ? va > vb : va < vb;
                      });
                      for (int k = 0; k < 3; ++k) y.push_back(out == 0 ? in[0].get_as_double(r * 6 + idx[k]) : idx[k]);
                    }
                    return y;
                  });
    }
  }
}

}  // namespace
}  // namespace kiln::engine
