// Scatter layers (params: kiln/engine/ops/movement/scatter.h): shape inference and the reference kernel.

#include <cstring>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Scatter>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 3, InvalidInput, "scatter needs data, indices, updates");
  const auto& p = layer.get<ScatterParams>();
  KILN_CHECK(in[1].dtype == DType::Int64 || in[1].dtype == DType::Int32, InvalidInput,
             "indices must be Int64/Int32");
  KILN_CHECK(in[2].dtype == in[0].dtype, InvalidInput, "updates dtype differs from data");
  size_t rank = in[0].dims.size();
  KILN_CHECK(p.axis >= 0 && p.axis < static_cast<int64_t>(rank), InvalidInput, "scatter axis out of range");
  KILN_CHECK(in[1].dims.size() == rank && in[2].dims.size() == rank, InvalidInput,
             "scatter indices/updates must have the data's rank");
  for (size_t d = 0; d < rank; ++d) {
    KILN_CHECK(in[1].dims[d] < 0 || in[2].dims[d] < 0 || in[1].dims[d] == in[2].dims[d], InvalidInput,
               "scatter indices and updates dims differ");
  }
  return {{in[0].dtype, in[0].dims}};
}

template <>
void run_kind<LayerKind::Scatter>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<ScatterParams>();
  const TensorView &x = args.inputs[0], &ix = args.inputs[1], &u = args.inputs[2], &y = args.outputs[0];
  if (x.nbytes()) std::memcpy(y.data, x.data, x.nbytes());
  auto xs = contiguous_strides(x.dims), is = contiguous_strides(ix.dims), us = contiguous_strides(u.dims);
  size_t r = x.dims.size();
  for (int64_t e = 0; e < ix.numel(); ++e) {
    int64_t rem = e, off = 0, uoff = 0;
    for (size_t d = 0; d < r; ++d) {
      int64_t c = rem / is[d];
      rem %= is[d];
      uoff += c * us[d];
      if (static_cast<int64_t>(d) == p.axis)
        c = checked_index(load(ix, e), x.dims[d]);
      else
        KILN_CHECK(c < x.dims[d], InvalidInput, "scatter: index dims exceed data dims");
      off += c * xs[d];
    }
    double v = load(u, uoff);
    store(y, off, p.reduction == ScatterParams::Add ? load(y, off) + v : v);
  }
}

}  // namespace kiln::engine::ops
