// Convolution and matrix multiply with the post-op chains the builder fuses into them (bias, activation,
// residual sum, in either order), against double references, at every precision. Run on the test backend
// ($KILN_TEST_BACKEND): on cuda these chains are the post-op pass after cuDNN / cuBLASLt (post_ops.h), so the
// shapes are chosen for its vectorized epilogue: element counts that leave a tail after the last 16-byte
// vector, channel sizes (h * w) that are not a multiple of the vector so one vector spans two channels, and
// one case whose channels are whole vectors. Tolerances: check_layer's (fp32 1e-4 / 1e-5; fp16 / bf16 1e-2
// against the fp32 reference: values of order 1 after a handful of roundings).

#include <cmath>

#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

struct Act {
  ActivationKind kind;
  double alpha = 0, beta = 0;
};

double activate(const Act& a, double x) {
  switch (a.kind) {
    case ActivationKind::Relu: return std::max(x, 0.0);
    case ActivationKind::Silu: return x / (1 + std::exp(-x));
    case ActivationKind::LeakyRelu: return x >= 0 ? x : a.alpha * x;
    case ActivationKind::HardSwish: return x * std::min(std::max(x + 3, 0.0), 6.0) / 6;
    case ActivationKind::Clip: return std::min(std::max(x, a.alpha), a.beta);
    case ActivationKind::GeluErf: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case ActivationKind::GeluTanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    default: ADD_FAILURE() << "no reference for activation " << activation_kind_name(a.kind); return x;
  }
}

std::string describe_chain(const char* what, const Act& a, bool act_first, const Dims& d) {
  std::string s = std::string(what) + " " + activation_kind_name(a.kind) +
                  (act_first ? " then residual" : " after residual");
  for (int64_t x : d) s += " " + std::to_string(x);
  return s;
}

// conv(x) + bias, then activation and residual x in either order: post-ops [act, Sum] or [Sum, act] after the
// bias.
TEST(EngineLayers, ConvolutionBiasActivationResidualPostOps) {
  std::mt19937 rng(611);
  struct Case {
    Dims x;  // n, c, h, w (the 3x3 pad-1 convolution keeps c, so x is the residual)
    Act act;
    bool act_first;
  };
  const std::vector<Case> cases = {
      {{2, 6, 7, 7},
       {ActivationKind::Relu},
       true},  // 588 elements: a tail; 49 per channel: vectors span channels
      {{2, 6, 7, 7}, {ActivationKind::Relu}, false},
      {{1, 16, 4, 4}, {ActivationKind::Silu}, false},  // 16 per channel: whole vectors per channel
      {{3, 5, 3, 5}, {ActivationKind::LeakyRelu, 0.1}, true},
      {{1, 8, 5, 6}, {ActivationKind::HardSwish}, false},
      {{2, 4, 6, 5}, {ActivationKind::Clip, -0.5, 0.75}, true},
      {{1, 6, 7, 7}, {ActivationKind::GeluErf}, true},
  };
  for (const Case& c : cases) {
    const int64_t n = c.x[0], ch = c.x[1], h = c.x[2], w = c.x[3];
    HostTensor k = random_tensor(DType::Float32, {ch, ch, 3, 3}, rng, -0.2, 0.2);
    HostTensor b = random_tensor(DType::Float32, {ch}, rng);
    HostTensor x = random_tensor(DType::Float32, c.x, rng);
    ConvolutionParams p;
    p.pre_padding = p.post_padding = {1, 1};
    check_layer(
        describe_chain("conv", c.act, c.act_first, c.x), {x},
        [&](Network& net, const std::vector<Tensor*>& in) {
          Tensor* y = net.add_convolution("conv", in[0], Weights("k", k), Weights("b", b), p);
          if (c.act_first) y = net.add_activation("act", y, c.act.kind, c.act.alpha, c.act.beta);
          y = net.add_elementwise("res", y, in[0], ElementwiseOp::Add);
          if (!c.act_first) y = net.add_activation("act", y, c.act.kind, c.act.alpha, c.act.beta);
          return y;
        },
        [&](const std::vector<HostTensor>& in) {
          std::vector<double> xv = values(in[0]), out;
          const size_t image = static_cast<size_t>(ch * h * w);
          for (int64_t i = 0; i < n; ++i) {
            std::vector<double> xi(xv.begin() + i * image, xv.begin() + (i + 1) * image);
            std::vector<double> y = conv3x3(xi, ch, h, w, k, b);
            for (size_t j = 0; j < y.size(); ++j) {
              y[j] = c.act_first ? activate(c.act, y[j]) + xi[j] : activate(c.act, y[j] + xi[j]);
            }
            out.insert(out.end(), y.begin(), y.end());
          }
          return out;
        },
        kAllPrecisions);
  }
}

// x W + bias, then activation and residual x in either order. On cuda the bias (and a leading ReLU or
// tanh-GELU) are cuBLASLt epilogues; erf-GELU, the other activations and the residual are the post-op pass.
TEST(EngineLayers, MatrixMultiplyBiasActivationResidualPostOps) {
  std::mt19937 rng(612);
  struct Case {
    Dims x;  // batch, rows, features (W is features x features, so x is the residual)
    Act act;
    bool act_first;
  };
  const std::vector<Case> cases = {
      {{2, 5, 13}, {ActivationKind::GeluErf}, true},   // 130 elements: a tail after the last vector
      {{2, 5, 13}, {ActivationKind::GeluTanh}, true},  // GELU in cuBLASLt, the residual alone in the pass
      {{2, 5, 13}, {ActivationKind::Relu}, false},     // [Sum, Relu] in the pass
      {{1, 3, 24}, {ActivationKind::GeluErf}, true},   // whole vectors only
      {{3, 7, 9}, {ActivationKind::Silu}, false},
  };
  for (const Case& c : cases) {
    const int64_t rows = c.x[0] * c.x[1], f = c.x[2];
    HostTensor wt = random_tensor(DType::Float32, {f, f}, rng, -0.3, 0.3);
    HostTensor b = random_tensor(DType::Float32, {f}, rng);
    HostTensor x = random_tensor(DType::Float32, c.x, rng);
    check_layer(
        describe_chain("matmul", c.act, c.act_first, c.x), {x},
        [&](Network& net, const std::vector<Tensor*>& in) {
          Tensor* y =
              net.add_matrix_multiply("mm", in[0], false, net.add_constant("w", Weights("w", wt)), false);
          y = net.add_elementwise("bias", y, net.add_constant("b", Weights("b", b)), ElementwiseOp::Add);
          if (c.act_first) y = net.add_activation("act", y, c.act.kind, c.act.alpha, c.act.beta);
          y = net.add_elementwise("res", y, in[0], ElementwiseOp::Add);
          if (!c.act_first) y = net.add_activation("act", y, c.act.kind, c.act.alpha, c.act.beta);
          return y;
        },
        [&](const std::vector<HostTensor>& in) {
          std::vector<double> xv = values(in[0]), out(static_cast<size_t>(rows * f));
          for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < f; ++j) {
              double s = b.get_as_double(j);
              for (int64_t q = 0; q < f; ++q) s += xv[i * f + q] * wt.get_as_double(q * f + j);
              double r = xv[i * f + j];
              out[i * f + j] = c.act_first ? activate(c.act, s) + r : activate(c.act, s + r);
            }
          }
          return out;
        },
        kAllPrecisions);
  }
}

// x W + bias + scale * r with no activation (the transformer's output projections): on cuda the residual is
// cuBLASLt's C operand, added before the one rounding of the output; a residual of other dims (broadcast over
// the rows) is added by the post-op pass instead. Scales 1 (add) and -1 (subtract).
TEST(EngineLayers, MatrixMultiplyBiasResidualPostOps) {
  std::mt19937 rng(613);
  struct Case {
    Dims x;         // batch, rows, features (W is features x features)
    Dims residual;  // x's dims, or [features] (broadcast)
    ElementwiseOp op;
  };
  const std::vector<Case> cases = {
      {{2, 5, 13}, {2, 5, 13}, ElementwiseOp::Add}, {{3, 4, 16}, {3, 4, 16}, ElementwiseOp::Sub},
      {{2, 5, 13}, {13}, ElementwiseOp::Add},       {{1, 7, 24}, {1, 7, 24}, ElementwiseOp::Add},
  };
  for (const Case& c : cases) {
    const int64_t rows = c.x[0] * c.x[1], f = c.x[2];
    const double sign = c.op == ElementwiseOp::Sub ? -1.0 : 1.0;
    HostTensor wt = random_tensor(DType::Float32, {f, f}, rng, -0.3, 0.3);
    HostTensor b = random_tensor(DType::Float32, {f}, rng);
    HostTensor x = random_tensor(DType::Float32, c.x, rng);
    HostTensor r = random_tensor(DType::Float32, c.residual, rng);
    check_layer(
        "matmul + bias " + std::string(sign > 0 ? "+" : "-") + " residual " + std::to_string(c.residual.size()) +
            "-d, x " + std::to_string(rows) + "x" + std::to_string(f),
        {x, r},
        [&](Network& net, const std::vector<Tensor*>& in) {
          Tensor* y =
              net.add_matrix_multiply("mm", in[0], false, net.add_constant("w", Weights("w", wt)), false);
          y = net.add_elementwise("bias", y, net.add_constant("b", Weights("b", b)), ElementwiseOp::Add);
          return net.add_elementwise("res", y, in[1], c.op);
        },
        [&](const std::vector<HostTensor>& in) {
          std::vector<double> xv = values(in[0]), rv = values(in[1]), out(static_cast<size_t>(rows * f));
          for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < f; ++j) {
              double s = b.get_as_double(j);
              for (int64_t q = 0; q < f; ++q) s += xv[i * f + q] * wt.get_as_double(q * f + j);
              out[i * f + j] = s + sign * rv[rv.size() == static_cast<size_t>(f) ? j : i * f + j];
            }
          }
          return out;
        },
        kAllPrecisions);
  }
}

}  // namespace
}  // namespace kiln::engine
