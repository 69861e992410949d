// Residual sums fused into convolution and matrix multiply where the residual dies at that layer: the memory plan
// may give the output the residual's buffer (oneDNN's sum post-op reads the destination). Run on the test
// backend ($KILN_TEST_BACKEND): a backend whose kernels add residuals after the main op must not get that alias
// (cuda wrote conv(x) over the residual and then added it to itself). Against double references; fp32 tolerance
// check_layer's 1e-4 / 1e-5, fp16/bf16 1e-2 (values of order 1, a handful of roundings).

#include <cmath>

#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

// x -> conv1 -> relu (r) -> conv2 + r -> relu: r is read by conv2 only, as its residual.
TEST(EngineLayers, ConvolutionResidualThatDiesAtTheConvolution) {
  std::mt19937 rng(501);
  const int64_t c = 8, h = 6, w = 5;
  HostTensor k1 = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2);
  HostTensor k2 = random_tensor(DType::Float32, {c, c, 3, 3}, rng, -0.2, 0.2);
  HostTensor b1 = random_tensor(DType::Float32, {c}, rng), b2 = random_tensor(DType::Float32, {c}, rng);
  HostTensor x = random_tensor(DType::Float32, {1, c, h, w}, rng);
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {1, 1};
  check_layer(
      "conv residual", {x},
      [&](Network& net, std::vector<Tensor*> in) {
        Tensor* r = net.add_activation("relu1", net.add_convolution("conv1", in[0], Weights("k1", k1),
                                                                     Weights("b1", b1), p),
                                       ActivationKind::Relu);
        Tensor* y = net.add_convolution("conv2", r, Weights("k2", k2), Weights("b2", b2), p);
        return net.add_activation("relu2", net.add_elementwise("add", y, r, ElementwiseOp::Add),
                                  ActivationKind::Relu);
      },
      [&](const std::vector<HostTensor>& in) {
        auto r = conv3x3(values(in[0]), c, h, w, k1, b1);
        for (double& v : r) v = std::max(v, 0.0);
        auto y = conv3x3(r, c, h, w, k2, b2);
        for (size_t i = 0; i < y.size(); ++i) y[i] = std::max(y[i] + r[i], 0.0);
        return y;
      },
      kAllPrecisions);
}

// x -> x W1 (+ GELU) = g -> g W2 + g: the transformer MLP's residual shape, g read by the second matmul only.
TEST(EngineLayers, MatrixMultiplyResidualThatDiesAtTheMatrixMultiply) {
  std::mt19937 rng(502);
  const int64_t m = 5, n = 12;
  HostTensor w1 = random_tensor(DType::Float32, {n, n}, rng, -0.3, 0.3);
  HostTensor w2 = random_tensor(DType::Float32, {n, n}, rng, -0.3, 0.3);
  HostTensor x = random_tensor(DType::Float32, {m, n}, rng);
  check_layer(
      "matmul residual", {x},
      [&](Network& net, std::vector<Tensor*> in) {
        Tensor* g = net.add_activation(
            "gelu", net.add_matrix_multiply("mm1", in[0], false, net.add_constant("w1", Weights("w1", w1)), false),
            ActivationKind::GeluErf);
        Tensor* y = net.add_matrix_multiply("mm2", g, false, net.add_constant("w2", Weights("w2", w2)), false);
        return net.add_elementwise("add", y, g, ElementwiseOp::Add);
      },
      [&](const std::vector<HostTensor>& in) {
        auto matmul = [&](const std::vector<double>& a, const HostTensor& b) {
          std::vector<double> out(static_cast<size_t>(m * n), 0.0);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j)
              for (int64_t k = 0; k < n; ++k) out[i * n + j] += a[i * n + k] * b.get_as_double(k * n + j);
          return out;
        };
        auto g = matmul(values(in[0]), w1);
        for (double& v : g) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        auto y = matmul(g, w2);
        for (size_t i = 0; i < y.size(); ++i) y[i] += g[i];
        return y;
      },
      kAllPrecisions);
}

}  // namespace
}  // namespace kiln::engine
