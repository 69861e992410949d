// The float fast paths of cuda pooling (spatial/pool_fast.cu) against host references computed here in
// double (nhwc_test.cpp's ChannelsLastPoolingEqualsPlanarPooling checks them against each other, bit for
// bit):
//   - global means and maxima at spatial sizes that take each path: warp rows (S < 2048), block rows
//     (S >= 2048), 16-byte loads or scalar ones (S or C not a multiple of the vector), channels-last split
//     over blocks (partials through the workspace) or not (no workspace); a NaN in a window propagates
//     through max;
//   - windowed channels-last pooling with dilation, padding and channel counts on and off the vector width.
// Tolerance: the kernels sum in double and round once (global) or sum in float in window order (windowed), so
// a result is within one rounding of the dtype (fp32 2^-24, fp16 2^-11, bf16 2^-8, relative) of the exact
// value, plus, for windowed averages, the float summation error of at most 9 values: 1e-6 of the mean of
// their magnitudes (values of both signs cancel, so the error is relative to that, not to the result).

#if KILN_HAVE_CUDA

#include <cmath>
#include <limits>

#include "engine/backends/cuda/conv_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;
using namespace cuda_conv_test;

/// got within one rounding of `want`, plus 1e-6 of `magnitude` (per element; empty: none).
void expect_close(const std::vector<double>& got, const std::vector<double>& want, DType dt,
                  const std::string& what, const std::vector<double>& magnitude = {}) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
      continue;
    }
    const double sum_error = magnitude.empty() ? 0.0 : 1e-6 * magnitude[i];
    EXPECT_NEAR(got[i], want[i], std::abs(want[i]) * dtype_rounding(dt) + sum_error + 1e-30)
        << what << " at " << i;
  }
}

HostTensor run_pool(const PoolingParams& p, const HostTensor& x_plain, const Dims& yd, TensorFormat f,
                    bool with_workspace = true) {
  const DType dt = x_plain.dtype();
  const Dims xd = x_plain.sizes();
  TestLayer t(LayerKind::Pooling, p, {{xd, f}}, {yd, f}, dt);
  auto k = shared_backend("cuda")->create_kernel(t.info, f == kCl ? "nhwc" : "generic");
  if (!with_workspace) {
    // The same kernel without room for partials: one block per channel chunk walks every position.
    struct NoWorkspace : Kernel {
      const Kernel& k;
      explicit NoWorkspace(const Kernel& inner) : k(inner) {}
      void execute(KernelArgs& args) const override {
        args.workspace = nullptr;
        args.workspace_size = 0;
        k.execute(args);
      }
    } bare(*k);
    return from_format(run_kernel(bare, {TensorView{nullptr, dt, xd, f}}, {to_format(x_plain, f)},
                                  TensorView{nullptr, dt, yd, f}),
                       f);
  }
  return from_format(run_kernel(*k, {TensorView{nullptr, dt, xd, f}}, {to_format(x_plain, f)},
                                TensorView{nullptr, dt, yd, f}),
                     f);
}

TEST(EngineCuda, GlobalPoolFastPathsMatchADoubleReference) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(91);
  // {N, C, H, W}: warp rows with and without 16-byte loads, block rows (S = 2304, 3136), channel counts on
  // and off every vector width, a batch that needs no split and one that splits.
  for (const Dims& xd : {Dims{2, 24, 7, 7}, Dims{3, 40, 8, 8}, Dims{2, 16, 48, 48}, Dims{4, 96, 56, 56},
                         Dims{1, 3, 45, 51}, Dims{64, 1280, 7, 7}}) {
    for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
      for (bool is_max : {false, true}) {
        HostTensor x = random_tensor(dt, xd, rng, -4, 4);
        const int64_t n = xd[0], c = xd[1], s = xd[2] * xd[3];
        if (is_max)
          x.set_from_double((1 * s) + 5, std::numeric_limits<double>::quiet_NaN());  // image 0, ch 1
        std::vector<double> xs = values(x), want(static_cast<size_t>(n * c));
        for (int64_t r = 0; r < n * c; ++r) {
          double acc = is_max ? -INFINITY : 0.0;
          for (int64_t k = 0; k < s; ++k) {
            double v = xs[r * s + k];
            acc = is_max ? ((std::isnan(acc) || std::isnan(v)) ? NAN : std::max(acc, v)) : acc + v;
          }
          want[r] = is_max ? acc : acc / static_cast<double>(s);
        }
        // The reference rounded to the dtype, as the kernel stores it.
        HostTensor rounded(dt, {n, c, 1, 1});
        for (int64_t r = 0; r < n * c; ++r) rounded.set_from_double(r, want[r]);
        PoolingParams p;
        p.kind = is_max ? PoolingParams::Max : PoolingParams::Average;
        p.adaptive = true;
        p.output_size = {1, 1};
        for (TensorFormat f : {kPlain, kCl}) {
          for (bool ws : {true, false}) {
            if (f == kPlain && !ws) continue;
            std::string what = std::string(is_max ? "max " : "mean ") + dtype_name(dt) + " " +
                               (f == kCl ? "channels-last" : "planar") + (ws ? "" : " without workspace") +
                               " N=" + std::to_string(n) + " C=" + std::to_string(c) +
                               " S=" + std::to_string(s);
            expect_close(values(run_pool(p, x, {n, c, 1, 1}, f, ws)), values(rounded), dt, what);
          }
        }
      }
    }
  }
}

TEST(EngineCuda, WindowedChannelsLastPoolFastPathMatchesADoubleReference) {
  KILN_REQUIRE_GPU();
  std::mt19937 rng(92);
  struct Case {
    PoolingParams::Kind kind;
    int64_t k, s, pad, dil;
    bool include_pad;
  };
  for (const Case& cs :
       {Case{PoolingParams::Max, 3, 2, 1, 1, true}, Case{PoolingParams::Max, 3, 1, 2, 2, true},
        Case{PoolingParams::Average, 3, 2, 1, 1, false}, Case{PoolingParams::Average, 2, 2, 1, 1, true}}) {
    for (const Dims& xd : {Dims{2, 64, 17, 15}, Dims{3, 5, 9, 9}, Dims{1, 12, 8, 8}}) {
      for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
        HostTensor x = random_tensor(dt, xd, rng, -4, 4);
        if (cs.kind == PoolingParams::Max) x.set_from_double(7, std::numeric_limits<double>::quiet_NaN());
        const int64_t n = xd[0], c = xd[1], h = xd[2], w = xd[3];
        auto out_size = [&](int64_t in) { return (in + 2 * cs.pad - cs.dil * (cs.k - 1) - 1) / cs.s + 1; };
        const int64_t oh = out_size(h), ow = out_size(w);
        HostTensor want(dt, {n, c, oh, ow});
        std::vector<double> xs = values(x), magnitude(static_cast<size_t>(n * c * oh * ow));
        for (int64_t i = 0; i < n * c; ++i)
          for (int64_t a = 0; a < oh; ++a)
            for (int64_t b = 0; b < ow; ++b) {
              double acc = cs.kind == PoolingParams::Max ? -INFINITY : 0.0, abs_sum = 0.0;
              int64_t count = 0;
              for (int64_t u = 0; u < cs.k; ++u)
                for (int64_t v = 0; v < cs.k; ++v) {
                  int64_t y0 = a * cs.s - cs.pad + u * cs.dil, x0 = b * cs.s - cs.pad + v * cs.dil;
                  if (y0 < 0 || y0 >= h || x0 < 0 || x0 >= w) continue;
                  double e = xs[(i * h + y0) * w + x0];
                  acc = cs.kind == PoolingParams::Max
                            ? ((std::isnan(acc) || std::isnan(e)) ? NAN : std::max(acc, e))
                            : acc + e;
                  abs_sum += std::abs(e);
                  ++count;
                }
              if (cs.kind == PoolingParams::Average)
                acc /= static_cast<double>(cs.include_pad ? cs.k * cs.k : count);
              want.set_from_double((i * oh + a) * ow + b, acc);
              magnitude[(i * oh + a) * ow + b] = count > 0 ? abs_sum / static_cast<double>(count) : 0.0;
            }
        PoolingParams p;
        p.kind = cs.kind;
        p.window = {cs.k, cs.k};
        p.stride = {cs.s, cs.s};
        p.pre_padding = p.post_padding = {cs.pad, cs.pad};
        p.dilation = {cs.dil, cs.dil};
        p.count_include_pad = cs.include_pad;
        std::string what = std::string(cs.kind == PoolingParams::Max ? "max " : "avg ") +
                           std::to_string(cs.k) + "x" + std::to_string(cs.k) + " s" + std::to_string(cs.s) +
                           " p" + std::to_string(cs.pad) + " d" + std::to_string(cs.dil) + " " +
                           dtype_name(dt) + " C=" + std::to_string(c);
        expect_close(values(run_pool(p, x, {n, c, oh, ow}, kCl)), values(want), dt, what, magnitude);
      }
    }
  }
}

}  // namespace
}  // namespace kiln::engine

#endif  // KILN_HAVE_CUDA
