// cuda's own channels-last convolution tactics (linalg/nhwc_conv.cpp) against a host reference computed here
// in double, on every path of their kernels:
//   - "depthwise_nhwc" (depthwise.cu): 3x3, 5x5 and 7x7 at stride 1 and 2 (sizes compiled in, 16-byte vectors
//   of
//     channels, several outputs per thread with row tails), a 4x4 kernel and a dilation (run-time bounds), a
//     channel count off the vector width (one channel per thread);
//   - "grouped_nhwc" (grouped.cu): regnet's 24-channel groups at stride 1 and 2 (16-byte vectors of input and
//     output channels, 4 or 2 outputs per thread), a dilation, groups whose widths are off the vector (one
//     output channel per thread), more output than input channels per group;
// each with a bias and SiLU, and with a residual Sum before the SiLU (the chain runs inside the kernel).
// Tolerance: the kernels sum in float and apply the chain in float, then round once to the dtype, so a result
// is within one rounding of the dtype (relative) of the exact value, plus the float error of summing at most
// 49 x 64 products: 1e-5 of the magnitude sum |x w| + |bias| + |0.5 z| (the sum of n terms errs by at most
// n x 2^-24 of it, and in practice by sqrt(n) x 2^-24; SiLU's slope is at most 1.1).

#if KILN_HAVE_CUDA

#include <cmath>

#include "engine/backends/cuda/conv_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;
using namespace cuda_conv_test;

PostOp silu_op() {
  PostOp op;
  op.kind = PostOp::Activation;
  op.activation.kind = ActivationKind::Silu;
  return op;
}

struct Case {
  int64_t c_in, c_out, groups, h, w, k, s, pad, dil;
};

/// Runs `tactic` on every case in fp32, fp16 and bf16, without and with a residual, against the reference.
void check_nhwc_tactic(const std::string& tactic, const std::vector<Case>& cases, uint32_t seed) {
  std::mt19937 rng(seed);
  for (const Case& cs : cases) {
    for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
      for (bool residual : {false, true}) {
        const int64_t n = 2, k = cs.k, cin_g = cs.c_in / cs.groups, cout_g = cs.c_out / cs.groups;
        auto out_size = [&](int64_t in) { return (in + 2 * cs.pad - cs.dil * (k - 1) - 1) / cs.s + 1; };
        const int64_t oh = out_size(cs.h), ow = out_size(cs.w);
        const Dims xd{n, cs.c_in, cs.h, cs.w}, yd{n, cs.c_out, oh, ow};
        HostTensor x = random_tensor(dt, xd, rng, -2, 2),
                   wt = random_tensor(dt, {cs.c_out, cin_g, k, k}, rng, -1, 1),
                   b = random_tensor(dt, {cs.c_out}, rng, -1, 1), z = random_tensor(dt, yd, rng, -2, 2);
        ConvolutionParams p;
        p.stride = {cs.s, cs.s};
        p.pre_padding = p.post_padding = {cs.pad, cs.pad};
        p.dilation = {cs.dil, cs.dil};
        p.groups = cs.groups;
        p.post_ops = residual ? std::vector<PostOp>{sum_op(0.5), silu_op()} : std::vector<PostOp>{silu_op()};
        std::vector<std::pair<Dims, TensorFormat>> ins = {{xd, kCl}};
        if (residual) ins.push_back({yd, kCl});
        TestLayer t(LayerKind::Convolution, p, ins, {yd, kCl}, dt);
        t.layer.weights = {Weights(wt), Weights(b)};
        auto kernel = shared_backend("cuda")->create_kernel(t.info, tactic);
        std::vector<TensorView> views = {TensorView{nullptr, dt, xd, kCl}};
        std::vector<HostTensor> data = {to_format(x, kCl)};
        if (residual) {
          views.push_back(TensorView{nullptr, dt, yd, kCl});
          data.push_back(to_format(z, kCl));
        }
        const std::vector<double> got =
            values(from_format(run_kernel(*kernel, views, data, TensorView{nullptr, dt, yd, kCl}), kCl));

        const std::vector<double> xs = values(x), ws = values(wt), bs = values(b), zs = values(z);
        HostTensor want(dt, yd);
        std::vector<double> magnitude(static_cast<size_t>(n * cs.c_out * oh * ow));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t co = 0; co < cs.c_out; ++co)
            for (int64_t a = 0; a < oh; ++a)
              for (int64_t e = 0; e < ow; ++e) {
                double acc = bs[co], mag = std::abs(bs[co]);
                for (int64_t ci = 0; ci < cin_g; ++ci)
                  for (int64_t u = 0; u < k; ++u)
                    for (int64_t v = 0; v < k; ++v) {
                      const int64_t y0 = a * cs.s - cs.pad + u * cs.dil, x0 = e * cs.s - cs.pad + v * cs.dil;
                      if (y0 < 0 || y0 >= cs.h || x0 < 0 || x0 >= cs.w) continue;
                      const int64_t c = (co / cout_g) * cin_g + ci;
                      const double term = xs[((i * cs.c_in + c) * cs.h + y0) * cs.w + x0] *
                                          ws[((co * cin_g + ci) * k + u) * k + v];
                      acc += term;
                      mag += std::abs(term);
                    }
                const int64_t o = ((i * cs.c_out + co) * oh + a) * ow + e;
                if (residual) {
                  acc += 0.5 * zs[o];
                  mag += std::abs(0.5 * zs[o]);
                }
                want.set_from_double(o, acc / (1.0 + std::exp(-acc)));
                magnitude[o] = mag;
              }
        const std::vector<double> wants = values(want);
        const std::string what = tactic + " " + std::to_string(cs.c_in) + "->" + std::to_string(cs.c_out) +
                                 " g" + std::to_string(cs.groups) + " " + std::to_string(k) + "x" +
                                 std::to_string(k) + " s" + std::to_string(cs.s) + " d" +
                                 std::to_string(cs.dil) + " " + dtype_name(dt) +
                                 (residual ? " with a residual" : "");
        ASSERT_EQ(got.size(), wants.size()) << what;
        for (size_t o = 0; o < got.size(); ++o) {
          ASSERT_NEAR(got[o], wants[o], std::abs(wants[o]) * dtype_rounding(dt) + 1e-5 * magnitude[o] + 1e-30)
              << what << " at " << o;
        }
      }
    }
  }
}

TEST(EngineCuda, DepthwiseNhwcMatchesADoubleReference) {
  KILN_REQUIRE_GPU();
  // {c_in, c_out, groups, h, w, k, stride, pad, dilation}
  check_nhwc_tactic("depthwise_nhwc",
                    {{32, 32, 32, 9, 13, 3, 1, 1, 1},
                     {24, 24, 24, 10, 9, 3, 2, 1, 1},
                     {16, 16, 16, 11, 11, 5, 1, 2, 1},
                     {40, 40, 40, 12, 10, 5, 2, 2, 1},
                     {16, 16, 16, 9, 9, 7, 1, 3, 1},
                     {8, 8, 8, 15, 14, 7, 2, 3, 1},
                     {16, 16, 16, 8, 8, 4, 1, 1, 1},
                     {16, 16, 16, 10, 10, 3, 1, 2, 2},
                     {12, 12, 12, 7, 9, 3, 1, 1, 1}},
                    93);
}

TEST(EngineCuda, GroupedNhwcMatchesADoubleReference) {
  KILN_REQUIRE_GPU();
  check_nhwc_tactic("grouped_nhwc",
                    {{48, 48, 2, 9, 11, 3, 1, 1, 1},
                     {72, 72, 3, 10, 9, 3, 2, 1, 1},
                     {48, 96, 2, 8, 8, 3, 1, 1, 1},
                     {32, 32, 4, 10, 10, 3, 1, 2, 2},
                     {12, 18, 3, 7, 9, 3, 1, 1, 1},
                     {64, 64, 4, 6, 6, 1, 1, 0, 1},
                     {128, 128, 2, 5, 5, 3, 1, 1, 1}},
                    94);
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
