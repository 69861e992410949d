// Resize layers (params: kiln/engine/ops/spatial/resize.h): shape inference and the reference kernel.

#include <algorithm>
#include <cmath>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"
#include "kiln/support/limits.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Resize>(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<ResizeParams>();
  KILN_CHECK(in.size() == 1 || in.size() == 2, InvalidInput, "resize takes 1 or 2 inputs");
  check_float(in[0], "input 0");
  const Dims& x = in[0].dims;
  KILN_CHECK(x.size() >= 3 && x.size() <= 5, InvalidInput, "resize needs an [N, C, spatial...] input");
  size_t ns = x.size() - 2;
  if (in.size() == 2) {
    auto v = shape_value(in[1], "resize shape input");
    if (!v) return {{in[0].dtype, Dims(x.size(), kUnknown)}};
    KILN_CHECK(v->size() == x.size(), InvalidInput, "resize shape input has ", v->size(),
               " entries for rank ", x.size());
    return {{in[0].dtype, *v}};
  }
  Dims out = {x[0], x[1]};
  if (!p.output_size.empty()) {
    KILN_CHECK(p.output_size.size() == ns, InvalidInput, "resize output_size needs ", ns, " entries");
    for (int64_t o : p.output_size) {
      KILN_CHECK(o >= 1, InvalidInput, "resize output size must be >= 1");
      out.push_back(o);
    }
  } else {
    KILN_CHECK(p.scales.size() == ns, InvalidInput, "resize needs output_size or ", ns, " scales");
    for (size_t i = 0; i < ns; ++i) {
      KILN_CHECK(p.scales[i] > 0, InvalidInput, "resize scale must be > 0");
      if (x[2 + i] < 0) {
        out.push_back(kUnknown);
        continue;
      }
      const double o = std::floor(static_cast<double>(x[2 + i]) * p.scales[i]);
      KILN_CHECK(o <= static_cast<double>(kMaxDimExtent), InvalidInput, "resize scale ", p.scales[i],
                 " makes dim ", 2 + i, " larger than ", kMaxDimExtent, " (docs/limits.md)");
      out.push_back(static_cast<int64_t>(o));
    }
  }
  return {{in[0].dtype, out}};
}

template <>
void run_kind<LayerKind::Resize>(const Layer& layer, KernelArgs& args) {
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
      if (p.align_corners)
        src = ys[d] > 1 ? oc[d] * static_cast<double>(xs[d] - 1) / (ys[d] - 1) : 0.0;
      else
        src = std::max((oc[d] + 0.5) * scale[d] - 0.5, 0.0);
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

}  // namespace kiln::engine::ops
