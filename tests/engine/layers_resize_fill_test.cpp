// Resize and Fill against naive references on the test backend ($KILN_TEST_BACKEND).
// Resize: nearest, linear and linear with align_corners over 1, 2 and 3 spatial dims, up- and down-sampling,
// sizes from output_size, from scales (which also set the source ratio) and from a shape tensor;
// fp32/fp16/bf16 with check_layer's tolerances (fp32 1e-4: the engine interpolates in double like this
// reference; fp16/bf16 1e-2). Fill: constant, arange and linspace whose length comes from a dynamic input's
// shape (so the fill runs as a kernel, not at build time), float and integer dtypes (integer fills exact,
// out-of-range constants saturate), start and step/end from params or from shape-tensor inputs.

#include <cmath>

#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

/// torch-style resize of x ([N, C, spatial...]) to `out` dims; `scales` (one per spatial dim) set the source
/// ratio when given, else in/out.
std::vector<double> ref_resize(const HostTensor& x, const Dims& out, bool linear, bool align_corners,
                               const std::vector<double>& scales) {
  const Dims& in = x.sizes();
  size_t r = in.size(), ns = r - 2;
  auto xs = strides(in);
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  std::vector<double> y(static_cast<size_t>(n));
  for (int64_t e = 0; e < n; ++e) {
    auto oc = unravel(e, out);
    std::vector<int64_t> i0(ns), i1(ns);
    std::vector<double> f(ns);
    for (size_t s = 0; s < ns; ++s) {
      int64_t il = in[2 + s], ol = out[2 + s];
      double scale = scales.empty() ? static_cast<double>(il) / static_cast<double>(ol) : 1.0 / scales[s];
      double o = static_cast<double>(oc[2 + s]);
      if (!linear) {
        i0[s] = i1[s] = std::min<int64_t>(static_cast<int64_t>(std::floor(o * scale)), il - 1);
        f[s] = 0;
        continue;
      }
      double src = align_corners
                       ? (ol > 1 ? o * static_cast<double>(il - 1) / static_cast<double>(ol - 1) : 0.0)
                       : std::max((o + 0.5) * scale - 0.5, 0.0);
      i0[s] = std::min<int64_t>(static_cast<int64_t>(std::floor(src)), il - 1);
      i1[s] = std::min<int64_t>(i0[s] + 1, il - 1);
      f[s] = src - static_cast<double>(i0[s]);
    }
    double acc = 0;
    for (int corner = 0; corner < (1 << ns); ++corner) {
      double w = 1;
      int64_t off = oc[0] * xs[0] + oc[1] * xs[1];
      for (size_t s = 0; s < ns; ++s) {
        bool hi = (corner >> s) & 1;
        w *= hi ? f[s] : 1.0 - f[s];
        off += (hi ? i1[s] : i0[s]) * xs[2 + s];
      }
      if (w != 0) acc += w * x.get_as_double(off);
    }
    y[static_cast<size_t>(e)] = acc;
  }
  return y;
}

struct ResizeCase {
  Dims in;
  std::vector<int64_t> output_size;  // empty: scales
  std::vector<double> scales;
};

TEST(EngineLayers, ResizeModesAndSpatialRanks) {
  std::mt19937 rng(321);
  const std::vector<ResizeCase> cases = {
      {{2, 3, 9}, {4}, {}},        // 1-d down
      {{2, 3, 9}, {20}, {}},       // 1-d up
      {{1, 2, 4, 5}, {7, 3}, {}},  // 2-d, up in one dim and down in the other
      {{2, 3, 6, 8}, {3, 4}, {}},
      {{1, 2, 4, 5}, {}, {2.0, 1.5}},    // scales: out 8 x 7
      {{1, 2, 6, 8}, {}, {0.5, 0.7}},    // scales: out 3 x 5, source ratio 1/0.7 (not 8/5)
      {{1, 2, 3, 4, 5}, {5, 2, 7}, {}},  // 3-d
      {{2, 16, 32, 32}, {64, 64}, {}},   // many elements (grid-stride loop)
  };
  for (const auto& c : cases) {
    HostTensor x = random_tensor(DType::Float32, c.in, rng);
    Dims out = {c.in[0], c.in[1]};
    for (size_t s = 0; s < c.in.size() - 2; ++s) {
      out.push_back(c.output_size.empty() ? static_cast<int64_t>(std::floor(c.in[2 + s] * c.scales[s]))
                                          : c.output_size[s]);
    }
    for (int mode = 0; mode < 3; ++mode) {  // nearest, linear, linear align_corners
      std::string what = "resize " + std::to_string(c.in.size() - 2) + "-d mode " + std::to_string(mode) +
                         (c.scales.empty() ? "" : " scales") + " out " + std::to_string(out.back());
      check_layer(
          what, {x},
          [&](Network& n, const std::vector<Tensor*>& in) {
            ResizeParams p;
            p.mode = mode == 0 ? ResizeParams::Nearest : ResizeParams::Linear;
            p.align_corners = mode == 2;
            p.output_size = c.output_size;
            p.scales = c.scales;
            return n.add_resize("", in[0], p);
          },
          [&](const std::vector<HostTensor>& in) {
            return ref_resize(in[0], out, mode > 0, mode == 2, c.scales);
          },
          kAllPrecisions);
    }
  }
}

TEST(EngineLayers, ResizeToShapeTensor) {
  std::mt19937 rng(322);
  HostTensor x = random_tensor(DType::Float32, {1, 2, 4, 5}, rng);
  for (int mode = 0; mode < 2; ++mode) {
    check_layer(
        "resize to a shape tensor mode " + std::to_string(mode), {x},
        [&](Network& n, const std::vector<Tensor*>& in) {
          ResizeParams p;
          p.mode = mode == 0 ? ResizeParams::Nearest : ResizeParams::Linear;
          p.scales = {3.0, 3.0};  // ignored: the shape input sets the size and the ratio
          Tensor* shape = n.add_constant("shape", HostTensor::from_int64s({1, 2, 6, 9}, {4}));
          return n.add_resize("", in[0], p, shape);
        },
        [&](const std::vector<HostTensor>& in) {
          return ref_resize(in[0], {1, 2, 6, 9}, mode == 1, false, {});
        },
        kAllPrecisions);
  }
}

/// Builds fill(shape(in0)) (constant) or a 1-D fill of length shape(in0)[1] (arange, linspace), with start
/// and delta/end as Int64 scalar shape tensors when given.
Tensor* add_fill_of(Network& n, Tensor* x, FillParams p, const int64_t* start = nullptr,
                    const int64_t* second = nullptr) {
  Tensor* shape = n.add_shape("", x);
  if (p.op != FillParams::Constant) shape = n.add_slice("", shape, SliceParams{{1}, {1}, {1}});
  Tensor* s = start ? n.add_constant("start", HostTensor::from_int64s({*start}, {})) : nullptr;
  Tensor* d = second ? n.add_constant("second", HostTensor::from_int64s({*second}, {})) : nullptr;
  return n.add_fill("fill", p, shape, s, d);
}

TEST(EngineLayers, FillConstantDtypes) {
  std::mt19937 rng(323);
  HostTensor x = random_tensor(DType::Float32, {3, 7}, rng);
  struct Case {
    DType dtype;
    double value, want;
    std::vector<TestPrecision> precisions;
  };
  const std::vector<Case> cases = {
      {DType::Float32, 0.375, 0.375, kAllPrecisions},
      {DType::Int32, -7, -7, {TestPrecision::FP32}},
      {DType::Int64, 123456789012.0, 123456789012.0, {TestPrecision::FP32}},
      {DType::UInt8, 300, 255, {TestPrecision::FP32}},  // saturates as the reference stores
      {DType::Bool, 1, 1, {TestPrecision::FP32}},
  };
  for (const auto& c : cases) {
    FillParams p{FillParams::Constant, c.dtype, {}, c.value, 0};
    check_layer(
        std::string("constant fill ") + dtype_name(c.dtype), {x},
        [&](Network& n, const std::vector<Tensor*>& in) { return add_fill_of(n, in[0], p); },
        [&](const std::vector<HostTensor>& in) { return std::vector<double>(in[0].numel(), c.want); },
        c.precisions, {0});
  }
}

TEST(EngineLayers, FillArangeAndLinspace) {
  std::mt19937 rng(324);
  HostTensor x = random_tensor(DType::Float32, {3, 37}, rng);
  auto arange = [](double start, double delta) {
    return [=](const std::vector<HostTensor>& in) {
      std::vector<double> y;
      for (int64_t i = 0; i < in[0].sizes()[1]; ++i) y.push_back(start + static_cast<double>(i) * delta);
      return y;
    };
  };
  auto linspace = [](double start, double end) {
    return [=](const std::vector<HostTensor>& in) {
      std::vector<double> y;
      int64_t n = in[0].sizes()[1];
      for (int64_t i = 0; i < n; ++i)
        y.push_back(start + (end - start) * static_cast<double>(i) / static_cast<double>(n - 1));
      return y;
    };
  };
  FillParams f32_arange{FillParams::Arange, DType::Float32, {}, 0.5, -0.25};
  check_layer("arange f32", {x},
              [&](Network& n, const std::vector<Tensor*>& in) { return add_fill_of(n, in[0], f32_arange); },
              arange(0.5, -0.25), kAllPrecisions, {0});
  FillParams i32_arange{FillParams::Arange, DType::Int32, {}, 2, 3};
  check_layer("arange i32", {x},
              [&](Network& n, const std::vector<Tensor*>& in) { return add_fill_of(n, in[0], i32_arange); },
              arange(2, 3), {TestPrecision::FP32}, {0});
  const int64_t start = -3, step = 4;
  FillParams i64_arange{FillParams::Arange, DType::Int64, {}, 0, 1};
  check_layer("arange i64 from start/step inputs", {x},
              [&](Network& n, const std::vector<Tensor*>& in) {
                return add_fill_of(n, in[0], i64_arange, &start, &step);
              },
              arange(-3, 4), {TestPrecision::FP32}, {0});
  FillParams lin{FillParams::Linspace, DType::Float32, {}, -1.0, 2.0};
  check_layer("linspace f32", {x},
              [&](Network& n, const std::vector<Tensor*>& in) { return add_fill_of(n, in[0], lin); },
              linspace(-1, 2), kAllPrecisions, {0});
  const int64_t lo = 0, hi = 10;
  check_layer(
      "linspace f32 from start/end inputs", {x},
      [&](Network& n, const std::vector<Tensor*>& in) { return add_fill_of(n, in[0], lin, &lo, &hi); },
      linspace(0, 10), kAllPrecisions, {0});
}

}  // namespace
}  // namespace kiln::engine
