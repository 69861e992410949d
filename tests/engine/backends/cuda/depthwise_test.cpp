// cuda's depthwise convolution tactic "depthwise_nhwc" (linalg/depthwise.cu) against a host reference
// computed here in double, on every path of its kernel: 3x3, 5x5 and 7x7 at stride 1 and 2 (sizes compiled
// in, 16-byte vectors of channels, several outputs per thread with row tails), a 4x4 kernel and a dilation
// (run-time bounds), a channel count off the vector width (one channel per thread); each with a bias and
// SiLU, and with a residual Sum before the SiLU (the chain runs inside the kernel). Tolerance: the kernel
// sums in float and applies the chain in float, then rounds once to the dtype, so a result is within one
// rounding of the dtype (relative) of the exact value, plus the float error of summing at most 49 products:
// 1e-5 of the magnitude sum |x w| + |bias| + |0.5 z| (49 x 2^-24 = 3e-6, with SiLU's slope at most 1.1).

#if KILN_HAVE_CUDA

#include <cmath>

#include "engine/backends/cuda/conv_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;
using namespace cuda_conv_test;
constexpr TensorFormat kCl = TensorFormat::ChannelsLast;

PostOp silu_op() {
  PostOp op;
  op.kind = PostOp::Activation;
  op.activation.kind = ActivationKind::Silu;
  return op;
}

TEST(EngineCuda, DepthwiseNhwcMatchesADoubleReference) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(93);
  struct Case {
    int64_t c, h, w, k, s, pad, dil;
  };
  for (const Case& cs :
       {Case{32, 9, 13, 3, 1, 1, 1}, Case{24, 10, 9, 3, 2, 1, 1}, Case{16, 11, 11, 5, 1, 2, 1},
        Case{40, 12, 10, 5, 2, 2, 1}, Case{16, 9, 9, 7, 1, 3, 1}, Case{8, 15, 14, 7, 2, 3, 1},
        Case{16, 8, 8, 4, 1, 1, 1}, Case{16, 10, 10, 3, 1, 2, 2}, Case{12, 7, 9, 3, 1, 1, 1}}) {
    for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
      for (bool residual : {false, true}) {
        const int64_t n = 2, c = cs.c, h = cs.h, w = cs.w, k = cs.k;
        auto out_size = [&](int64_t in) { return (in + 2 * cs.pad - cs.dil * (k - 1) - 1) / cs.s + 1; };
        const int64_t oh = out_size(h), ow = out_size(w);
        const Dims xd{n, c, h, w}, yd{n, c, oh, ow};
        HostTensor x = random_tensor(dt, xd, rng, -2, 2), wt = random_tensor(dt, {c, 1, k, k}, rng, -1, 1),
                   b = random_tensor(dt, {c}, rng, -1, 1), z = random_tensor(dt, yd, rng, -2, 2);
        ConvolutionParams p;
        p.stride = {cs.s, cs.s};
        p.pre_padding = p.post_padding = {cs.pad, cs.pad};
        p.dilation = {cs.dil, cs.dil};
        p.groups = c;
        p.post_ops = residual ? std::vector<PostOp>{sum_op(0.5), silu_op()} : std::vector<PostOp>{silu_op()};
        std::vector<std::pair<Dims, TensorFormat>> ins = {{xd, kCl}};
        if (residual) ins.push_back({yd, kCl});
        TestLayer t(LayerKind::Convolution, p, ins, {yd, kCl}, dt);
        t.layer.weights = {Weights(wt), Weights(b)};
        auto kernel = shared_backend("cuda")->create_kernel(t.info, "depthwise_nhwc");
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
        std::vector<double> magnitude(static_cast<size_t>(n * c * oh * ow));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t a = 0; a < oh; ++a)
              for (int64_t e = 0; e < ow; ++e) {
                double acc = bs[ch], mag = std::abs(bs[ch]);
                for (int64_t u = 0; u < k; ++u)
                  for (int64_t v = 0; v < k; ++v) {
                    const int64_t y0 = a * cs.s - cs.pad + u * cs.dil, x0 = e * cs.s - cs.pad + v * cs.dil;
                    if (y0 < 0 || y0 >= h || x0 < 0 || x0 >= w) continue;
                    const double term = xs[((i * c + ch) * h + y0) * w + x0] * ws[(ch * k + u) * k + v];
                    acc += term;
                    mag += std::abs(term);
                  }
                const int64_t o = ((i * c + ch) * oh + a) * ow + e;
                if (residual) {
                  acc += 0.5 * zs[o];
                  mag += std::abs(0.5 * zs[o]);
                }
                want.set_from_double(o, acc / (1.0 + std::exp(-acc)));
                magnitude[o] = mag;
              }
        const std::vector<double> wants = values(want);
        const std::string what = std::to_string(k) + "x" + std::to_string(k) + " s" + std::to_string(cs.s) +
                                 " d" + std::to_string(cs.dil) + " C=" + std::to_string(c) + " " +
                                 dtype_name(dt) + (residual ? " with a residual" : "");
        ASSERT_EQ(got.size(), wants.size()) << what;
        for (size_t o = 0; o < got.size(); ++o) {
          ASSERT_NEAR(got[o], wants[o], std::abs(wants[o]) * dtype_rounding(dt) + 1e-5 * magnitude[o] + 1e-30)
              << what << " at " << o;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
