// oneDNN's INT8 kernels compute exactly on the integers Kiln quantizes, on every x86 CPU: with VNNI (8-bit
// weights) and without it (7-bit weights, u8 storage only: onednn::int8_weight_max, int8_layer_exact; a
// signed fp32 input stored as u8 with zero point 128, signed_input_zero_point). The inputs sit at the top of
// the u8 range (or both ends of the s8 one) and every weight of a channel has the same sign, so each pair of
// products the kernels add in 16 bits on a CPU without VNNI is as large as it can be: 8-bit weights there sum
// to 255 x 127 x 2 = 64770 and saturate at 32767 (these tests then fail by several percent), 7-bit ones stay
// exact.
//
// Tolerance: the kernels' s32 sums are exact and below 2^24 (so exact in fp32 too); scaling them to fp32
// rounds once or twice: 2e-6 of the output's largest magnitude.

#include <cmath>
#include <random>

#include "engine/backends/cpu/onednn/onednn_common.h"
#include "engine/engine_test_util.h"
#include "engine/ops/quantize.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {
namespace {
using namespace testing;

constexpr float kInputStep = 0.03f;

// Values k x kInputStep with k in [240, 255]: on the u8 grid of the range [0, 255 x kInputStep].
HostTensor top_of_u8_range(const Dims& dims, std::mt19937& rng) {
  std::uniform_int_distribution<int> k(240, 255);
  HostTensor t(DType::Float32, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, k(rng) * kInputStep);
  return t;
}

// Weights [outer, channels, inner] of one sign per channel (alternating), near the channel's largest.
std::vector<float> same_sign_weights(int64_t outer, int64_t channels, int64_t inner, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0.8f, 1.0f);
  std::vector<float> w(static_cast<size_t>(outer * channels * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < inner; ++i)
        w[(o * channels + c) * inner + i] = (c % 2 ? -0.05f : 0.07f) * u(rng);
    }
  }
  return w;
}

HostTensor as_tensor(const std::vector<float>& v, const Dims& dims) {
  HostTensor t(DType::Float32, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, v[static_cast<size_t>(i)]);
  return t;
}

// The INT8 build (first and last layers allowed, untimed: the INT8 tactic wherever it applies).
std::shared_ptr<Plan> build_int8(const Network& net) {
  BuilderConfig config;
  config.timing_iterations = 0;
  config.precisions = {Precision::FP32, Precision::INT8};
  config.int8_first_last = true;
  return build(net, config);
}

int int8_layers(const Plan& plan) {
  int n = 0;
  for (const PlanLayerInfo& l : plan.layers()) n += l.int8 ? 1 : 0;
  return n;
}

// max |got - want| over max |want|.
double relative_error(const HostTensor& got, const std::vector<double>& want) {
  double amax = 0, worst = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    amax = std::max(amax, std::fabs(want[static_cast<size_t>(i)]));
    worst = std::max(worst, std::fabs(got.get_as_double(i) - want[static_cast<size_t>(i)]));
  }
  return worst / amax;
}

// A 3x3 convolution of x [1, C, H, W] (values on the grid of kInputStep within [lo, hi], its range) by
// same-sign kernels, with `pad` zeros around: one INT8 layer whose output equals its integer sums (padding
// counting as 0).
void expect_conv_equals_integer_sums(const HostTensor& x, float lo, float hi, int64_t pad,
                                     std::mt19937& rng) {
  const int64_t c = x.sizes()[1], h = x.sizes()[2], w = x.sizes()[3], o = 8, inner = c * 9;
  const std::vector<float> k = same_sign_weights(1, o, inner, rng);
  Network net;
  Tensor* in = net.add_input("x", DType::Float32, {1, c, h, w});
  in->set_dynamic_range(lo, hi);
  ConvolutionParams p;
  p.pre_padding = p.post_padding = {pad, pad};
  Tensor* y = net.add_convolution("conv", in, Weights("k", as_tensor(k, {o, c, 3, 3})), Weights(), p);
  y->set_name("y");
  net.mark_output(y);
  const auto plan = build_int8(net);
  ASSERT_EQ(int8_layers(*plan), 1);

  const ops::QuantizedWeights q =
      ops::quantize_per_channel(k, 1, o, inner, {}, cpu::onednn::int8_weight_max());
  const int64_t oh = h + 2 * pad - 2, ow = w + 2 * pad - 2;
  std::vector<double> want(static_cast<size_t>(o * oh * ow));
  for (int64_t n = 0; n < o; ++n) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        int64_t sum = 0;
        for (int64_t ci = 0; ci < c; ++ci) {
          for (int64_t di = 0; di < 3; ++di) {
            for (int64_t dj = 0; dj < 3; ++dj) {
              const int64_t r = i + di - pad, col = j + dj - pad;
              if (r < 0 || col < 0 || r >= h || col >= w) continue;
              const int64_t xq = std::lround(x.get_as_double((ci * h + r) * w + col) / kInputStep);
              sum += xq * q.values[static_cast<size_t>(n * inner + (ci * 3 + di) * 3 + dj)];
            }
          }
        }
        want[static_cast<size_t>((n * oh + i) * ow + j)] =
            static_cast<double>(sum) * kInputStep * q.scales[n];
      }
    }
  }
  EXPECT_LE(relative_error(run(plan, {{"x", x}})[0], want), 2e-6);
}

// Values k x kInputStep with |k| in [112, 127] and either sign: both ends of the s8 grid of the range
// [-127, 127] x kInputStep (stored near 0 and near 255 as u8 with zero point 128).
HostTensor ends_of_s8_range(const Dims& dims, std::mt19937& rng) {
  std::uniform_int_distribution<int> k(112, 127);
  std::bernoulli_distribution negative(0.5);
  HostTensor t(DType::Float32, dims);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_from_double(i, (negative(rng) ? -k(rng) : k(rng)) * kInputStep);
  return t;
}

TEST(OnednnInt8Exact, ConvolutionOnAU8InputEqualsItsIntegerSums) {
  std::mt19937 rng(31);
  // No padding: every output sums all 288 products.
  expect_conv_equals_integer_sums(top_of_u8_range({1, 32, 6, 5}, rng), 0.0f, 255 * kInputStep, 0, rng);
}

// A signed fp32 input on every CPU: quantized to s8 with VNNI, and without it to u8 with zero point 128
// (signed_input_zero_point), whose compensation oneDNN subtracts in 32 bits, the padding counting as the zero
// point: a padding read as a stored 0 (-128) would be off at the borders by 128 x the taps outside.
TEST(OnednnInt8Exact, ConvolutionOnASignedInputEqualsItsIntegerSumsPaddingIncluded) {
  std::mt19937 rng(33);
  expect_conv_equals_integer_sums(ends_of_s8_range({1, 32, 6, 5}, rng), -127 * kInputStep, 127 * kInputStep,
                                  1, rng);
}

// A [m, K] matmul by same-sign weight columns, A's values on the grid of kInputStep within [lo, hi] (its
// range): one INT8 layer whose output equals its integer sums.
void expect_matmul_equals_integer_sums(const HostTensor& a, float lo, float hi, std::mt19937& rng) {
  const int64_t m = a.sizes()[0], kk = a.sizes()[1], n = 16;
  const std::vector<float> b = same_sign_weights(kk, n, 1, rng);  // [K, N]: the channels are the columns
  Network net;
  Tensor* in = net.add_input("a", DType::Float32, {m, kk});
  in->set_dynamic_range(lo, hi);
  Tensor* y = net.add_matrix_multiply("mm", in, false,
                                      net.add_constant("b", Weights("b", as_tensor(b, {kk, n}))), false);
  y->set_name("y");
  net.mark_output(y);
  const auto plan = build_int8(net);
  ASSERT_EQ(int8_layers(*plan), 1);

  const ops::QuantizedWeights q = ops::quantize_per_channel(b, kk, n, 1, {}, cpu::onednn::int8_weight_max());
  std::vector<double> want(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (int64_t l = 0; l < kk; ++l)
        sum += std::lround(a.get_as_double(i * kk + l) / kInputStep) * q.values[l * n + j];
      want[static_cast<size_t>(i * n + j)] = static_cast<double>(sum) * kInputStep * q.scales[j];
    }
  }
  EXPECT_LE(relative_error(run(plan, {{"a", a}})[0], want), 2e-6);
}

TEST(OnednnInt8Exact, MatrixMultiplyOnAU8InputEqualsItsIntegerSums) {
  std::mt19937 rng(37);
  expect_matmul_equals_integer_sums(top_of_u8_range({5, 256}, rng), 0.0f, 255 * kInputStep, rng);
}

// A signed A on every CPU: stored as s8 with VNNI, and without it as u8 with zero point 128
// (signed_input_zero_point), whose 32-bit compensation oneDNN subtracts. The values sit at both ends
// of the s8 range (stored near 0 and near 255), the weights at the top of their range with one sign a column:
// a missing or doubled compensation would be off by 128 x a column's sum, halved weights by half a step each.
TEST(OnednnInt8Exact, MatrixMultiplyOnASignedInputEqualsItsIntegerSums) {
  std::mt19937 rng(43);
  expect_matmul_equals_integer_sums(ends_of_s8_range({6, 256}, rng), -127 * kInputStep, 127 * kInputStep,
                                    rng);
}

// An s8 tensor written by another INT8 layer is read as it is: oneDNN without VNNI halves the weights of a
// layer reading s8, so there such a layer stays floating (the builder keeps its input fp32); with VNNI it
// runs INT8.
TEST(OnednnInt8Exact, AnS8InputIsReadInInt8OnlyWithVnni) {
  std::string why;
  const bool vnni = cpu::onednn::int8_products_exact(&why);
  EXPECT_EQ(cpu::onednn::int8_layer_exact(DType::Int8, false, &why), vnni);
  EXPECT_TRUE(cpu::onednn::int8_layer_exact(DType::UInt8, false, &why)) << why;
  EXPECT_EQ(cpu::onednn::int8_weight_max(), vnni ? 127 : 63);
  EXPECT_EQ(cpu::onednn::signed_input_zero_point(), vnni ? 0 : 128);
  if (!vnni) EXPECT_NE(why.find("signed input"), std::string::npos) << why;
}

// oneDNN picks an implementation per configuration: on a VNNI CPU a primitive that lands on a kernel compiled
// for an ISA without VNNI would add 8-bit weights' product pairs in 16 bits. Which names are taken as exact
// (impl_info_str() forms of oneDNN 2.6) for 8-bit weights, and that 7-bit weights are exact everywhere.
TEST(OnednnInt8Exact, ImplementationsWithoutVnniAreRefusedFor8BitWeights) {
  using cpu::onednn::int8_impl_exact;
  for (const char* exact :
       {"brgconv:avx512_core_vnni", "brgconv_1x1:avx512_core_vnni", "brdgmm_dw:avx512_core_vnni",
        "jit:avx512_core_amx_int8", "ip:brgemm:avx512_core_vnni", "jit_uni_int8:avx2_vnni",
        "brg:avx512_core_bf16", "x64:gemm_s8u8s32:jit", "gemm:jit", "ref_int8:any", "ref:any"}) {
    std::string why;
    EXPECT_TRUE(int8_impl_exact(exact, 127, &why)) << exact << ": " << why;
  }
  for (const char* pairs16 :
       {"jit_uni_int8:avx2", "jit_uni_int8_1x1:avx2", "jit_uni_int8:sse41", "jit_uni_int8_1x1:sse41"}) {
    std::string why;
    EXPECT_FALSE(int8_impl_exact(pairs16, 127, &why)) << pairs16;
    EXPECT_NE(why.find(pairs16), std::string::npos) << why;
    EXPECT_TRUE(int8_impl_exact(pairs16, 63, &why)) << pairs16;  // 255 x 63 x 2 fits in 16 bits
  }
}

}  // namespace
}  // namespace kiln::engine
