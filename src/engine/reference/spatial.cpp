// Reference kernels: pooling (max/average, ceil mode, count_include_pad, adaptive) and resize.

#include <cmath>
#include <limits>

#include "engine/reference/common.h"
#include "engine/reference/reference.h"

namespace kiln::engine::ref {
namespace {

/// Spatial dims padded to 3 (leading 1s).
std::vector<int64_t> to3(const Dims& d, size_t ns, int64_t fill = 1) {
  std::vector<int64_t> r(3, fill);
  for (size_t i = 0; i < ns; ++i) r[3 - ns + i] = d[d.size() - ns + i];
  return r;
}
std::vector<int64_t> vec3(std::vector<int64_t> v, size_t ns, int64_t fill) {
  if (v.empty()) v.assign(ns, fill);
  while (v.size() < 3) v.insert(v.begin(), fill);
  return v;
}

}  // namespace

void execute_pooling(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<PoolingParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  size_t ns = x.dims.size() - 2;
  auto xs = to3(x.dims, ns), ys = to3(y.dims, ns);
  auto win = vec3(p.window, ns, 1), st = vec3(p.stride, ns, 1), pd = vec3(p.pre_padding, ns, 0),
       dl = vec3(p.dilation, ns, 1);
  int64_t planes = x.dims[0] * x.dims[1];
  int64_t xsp = xs[0] * xs[1] * xs[2], ysp = ys[0] * ys[1] * ys[2];
  std::vector<double> xv = load_all(x), yv(static_cast<size_t>(planes * ysp));
  parallel(args.pool, planes, 1, [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      for (int64_t o = 0; o < ysp; ++o) {
        int64_t oc[3] = {o / (ys[1] * ys[2]), (o / ys[2]) % ys[1], o % ys[2]};
        int64_t lo[3], hi[3], step[3];
        int64_t pool_size = 1;
        for (int d = 0; d < 3; ++d) {
          if (p.adaptive) {
            lo[d] = oc[d] * xs[d] / ys[d];
            hi[d] = ((oc[d] + 1) * xs[d] + ys[d] - 1) / ys[d];
            step[d] = 1;
          } else {
            int64_t s = oc[d] * st[d] - pd[d];
            int64_t end = std::min(s + (win[d] - 1) * dl[d] + 1, xs[d] + pd[d]);
            pool_size *= (p.kind == PoolingParams::Average ? end - s : 1);
            lo[d] = s;
            hi[d] = std::min(end, xs[d]);
            step[d] = dl[d];
            while (lo[d] < 0) lo[d] += dl[d];
          }
        }
        double acc = p.kind == PoolingParams::Max ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t count = 0;
        for (int64_t i0 = lo[0]; i0 < hi[0]; i0 += step[0])
          for (int64_t i1 = lo[1]; i1 < hi[1]; i1 += step[1])
            for (int64_t i2 = lo[2]; i2 < hi[2]; i2 += step[2]) {
              double v = xv[pl * xsp + (i0 * xs[1] + i1) * xs[2] + i2];
              if (p.kind == PoolingParams::Max) acc = (std::isnan(v) || v > acc) ? v : acc;
              else acc += v;
              ++count;
            }
        if (p.kind == PoolingParams::Average) {
          int64_t div = (!p.adaptive && p.count_include_pad) ? pool_size : count;
          acc = div > 0 ? acc / static_cast<double>(div) : 0.0;
        }
        yv[pl * ysp + o] = acc;
      }
    }
  });
  store_all(y, yv);
}

void execute_resize(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<ResizeParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  size_t ns = x.dims.size() - 2;
  auto xs = to3(x.dims, ns), ys = to3(y.dims, ns);
  double scale[3] = {1, 1, 1};
  for (size_t i = 0; i < 3; ++i) {
    size_t si = i + ns - 3;  // index into p.scales when i >= 3 - ns
    bool has_scale = i >= 3 - ns && !p.scales.empty() && p.output_size.empty() && args.inputs.size() == 1;
    scale[i] = has_scale ? 1.0 / p.scales[si] : static_cast<double>(xs[i]) / static_cast<double>(ys[i]);
  }
  int64_t planes = x.dims[0] * x.dims[1];
  int64_t xsp = xs[0] * xs[1] * xs[2], ysp = ys[0] * ys[1] * ys[2];
  std::vector<double> xv = load_all(x), yv(static_cast<size_t>(planes * ysp));
  for (int64_t o = 0; o < ysp; ++o) {
    int64_t oc[3] = {o / (ys[1] * ys[2]), (o / ys[2]) % ys[1], o % ys[2]};
    int64_t i0[3], i1[3];
    double w1[3];
    for (int d = 0; d < 3; ++d) {
      if (p.mode == ResizeParams::Nearest) {
        i0[d] = i1[d] = std::min(static_cast<int64_t>(std::floor(oc[d] * scale[d])), xs[d] - 1);
        w1[d] = 0;
        continue;
      }
      double src;
      if (p.align_corners) src = ys[d] > 1 ? oc[d] * static_cast<double>(xs[d] - 1) / (ys[d] - 1) : 0.0;
      else src = std::max((oc[d] + 0.5) * scale[d] - 0.5, 0.0);
      i0[d] = std::min(static_cast<int64_t>(std::floor(src)), xs[d] - 1);
      i1[d] = std::min(i0[d] + 1, xs[d] - 1);
      w1[d] = src - static_cast<double>(i0[d]);
    }
    for (int64_t pl = 0; pl < planes; ++pl) {
      double acc = 0;
      for (int c = 0; c < 8; ++c) {
        double w = 1;
        int64_t idx[3];
        for (int d = 0; d < 3; ++d) {
          bool hi = (c >> d) & 1;
          w *= hi ? w1[d] : 1.0 - w1[d];
          idx[d] = hi ? i1[d] : i0[d];
        }
        if (w != 0) acc += w * xv[pl * xsp + (idx[0] * xs[1] + idx[1]) * xs[2] + idx[2]];
      }
      yv[pl * ysp + o] = acc;
    }
  }
  store_all(y, yv);
}

}  // namespace kiln::engine::ref
