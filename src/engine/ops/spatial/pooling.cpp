// Pooling layers (params: kiln/engine/ops/spatial/pooling.h): shape inference and the reference kernel.

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Pooling>(const Layer& layer, const std::vector<ShapeIn>& in) {
  PoolingParams p = layer.get<PoolingParams>();
  KILN_CHECK(in.size() == 1, InvalidInput, "pooling needs 1 input");
  check_float(in[0], "input 0");
  const Dims& x = in[0].dims;
  size_t ns = p.adaptive ? p.output_size.size() : p.window.size();
  KILN_CHECK(ns >= 1 && ns <= 3 && x.size() == ns + 2, InvalidInput, "pooling over ", ns,
             " spatial dims needs rank ", ns + 2, " input, got ", x.size());
  Dims out = {x[0], x[1]};
  if (p.adaptive) {
    for (int64_t o : p.output_size) {
      KILN_CHECK(o >= 1, InvalidInput, "adaptive output size must be >= 1");
      out.push_back(o);
    }
    return {{in[0].dtype, out}};
  }
  fill_default(p.stride, ns, 1, "stride");
  fill_default(p.pre_padding, ns, 0, "pre_padding");
  fill_default(p.post_padding, ns, 0, "post_padding");
  fill_default(p.dilation, ns, 1, "dilation");
  for (size_t i = 0; i < ns; ++i) {
    KILN_CHECK(p.window[i] >= 1 && p.stride[i] >= 1 && p.dilation[i] >= 1, InvalidInput, "bad window/stride");
    KILN_CHECK(p.pre_padding[i] >= 0 && p.pre_padding[i] * 2 <= p.window[i] && p.post_padding[i] >= 0,
               InvalidInput, "padding ", p.pre_padding[i], " must be at most half the window ", p.window[i]);
  }
  Dims sp(x.begin() + 2, x.end());
  Dims o = conv_like_out(sp, p.window, p.stride, p.pre_padding, p.post_padding, p.dilation, p.ceil_mode);
  out.insert(out.end(), o.begin(), o.end());
  return {{in[0].dtype, out}};
}

template <>
void run_kind<LayerKind::Pooling>(const Layer& layer, KernelArgs& args) {
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
              if (p.kind == PoolingParams::Max)
                acc = (std::isnan(v) || v > acc) ? v : acc;
              else
                acc += v;
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

}  // namespace kiln::engine::ops
