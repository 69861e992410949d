// Padding layers (params: kiln/engine/ops/movement/padding.h): shape inference and the reference kernel.

#include <cstring>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Padding>(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<PaddingParams>();
  KILN_CHECK(in.size() == 1, InvalidInput, "padding needs 1 input");
  size_t rank = in[0].dims.size();
  KILN_CHECK(p.pre.size() == rank && p.post.size() == rank, InvalidInput, "padding needs ", rank,
             " pre and post entries");
  Dims out;
  for (size_t d = 0; d < rank; ++d) {
    KILN_CHECK(p.pre[d] >= 0 && p.post[d] >= 0, InvalidInput, "negative padding in dim ", d);
    int64_t x = in[0].dims[d];
    if (x >= 0 && (p.pre[d] || p.post[d])) {
      if (p.mode == PaddingParams::Reflect) {
        KILN_CHECK(p.pre[d] < x && p.post[d] < x, InvalidInput, "reflect padding must be smaller than dim ",
                   d);
      } else if (p.mode != PaddingParams::Constant) {
        KILN_CHECK(x > 0 && (p.mode != PaddingParams::Circular || (p.pre[d] <= x && p.post[d] <= x)),
                   InvalidInput, "padding mode needs a larger dim ", d);
      }
    }
    out.push_back(x < 0 ? kUnknown : x + p.pre[d] + p.post[d]);
  }
  return {{in[0].dtype, out}};
}

template <>
void run_kind<LayerKind::Padding>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<PaddingParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  size_t r = x.dims.size(), es = dtype_size(x.dtype);
  auto xs = contiguous_strides(x.dims), ys = contiguous_strides(y.dims);
  for (int64_t e = 0; e < y.numel(); ++e) {
    int64_t rem = e, off = 0;
    bool outside = false;
    for (size_t d = 0; d < r; ++d) {
      int64_t c = rem / ys[d] - p.pre[d];
      rem %= ys[d];
      int64_t n = x.dims[d];
      if (c < 0 || c >= n) {
        switch (p.mode) {
          case PaddingParams::Constant: outside = true; break;
          case PaddingParams::Reflect: c = c < 0 ? -c : 2 * (n - 1) - c; break;
          case PaddingParams::Replicate: c = c < 0 ? 0 : n - 1; break;
          case PaddingParams::Circular: c = ((c % n) + n) % n; break;
        }
      }
      off += c * xs[d];
    }
    if (outside)
      store(y, e, p.value);
    else
      std::memcpy(bytes(y) + e * es, bytes(x) + off * es, es);
  }
}

}  // namespace kiln::engine::ops
