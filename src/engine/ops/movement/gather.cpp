// Gather layers (params: kiln/engine/ops/movement/gather.h): shape inference and the reference kernel.

#include <cstring>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Gather>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 2, InvalidInput, "gather needs data and indices");
  const auto& p = layer.get<GatherParams>();
  KILN_CHECK(in[1].dtype == DType::Int64 || in[1].dtype == DType::Int32, InvalidInput,
             "indices must be Int64/Int32, got ", dtype_name(in[1].dtype));
  int64_t rank = static_cast<int64_t>(in[0].dims.size());
  KILN_CHECK(p.axis >= 0 && p.axis < rank, InvalidInput, "gather axis ", p.axis, " out of range for rank ",
             rank);
  if (p.mode == GatherParams::Elements) {
    KILN_CHECK(in[1].dims.size() == in[0].dims.size(), InvalidInput, "gather elements: indices rank differs");
    return {{in[0].dtype, in[1].dims}};
  }
  Dims out(in[0].dims.begin(), in[0].dims.begin() + p.axis);
  out.insert(out.end(), in[1].dims.begin(), in[1].dims.end());
  out.insert(out.end(), in[0].dims.begin() + p.axis + 1, in[0].dims.end());
  return {{in[0].dtype, out}};
}

template <>
void run_kind<LayerKind::Gather>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<GatherParams>();
  const TensorView &x = args.inputs[0], &ix = args.inputs[1], &y = args.outputs[0];
  size_t es = dtype_size(x.dtype);
  int64_t n = x.dims[p.axis];
  if (p.mode == GatherParams::Default) {
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < p.axis; ++i) outer *= x.dims[i];
    for (size_t i = static_cast<size_t>(p.axis) + 1; i < x.dims.size(); ++i) inner *= x.dims[i];
    int64_t ni = ix.numel();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < ni; ++j) {
        int64_t src = checked_index(load(ix, j), n);
        if (inner)
          std::memcpy(bytes(y) + (o * ni + j) * inner * es, bytes(x) + (o * n + src) * inner * es,
                      inner * es);
      }
    return;
  }
  auto xs = contiguous_strides(x.dims), is = contiguous_strides(ix.dims);
  size_t r = x.dims.size();
  for (int64_t e = 0; e < ix.numel(); ++e) {
    int64_t rem = e, off = 0;
    for (size_t d = 0; d < r; ++d) {
      int64_t c = rem / is[d];
      rem %= is[d];
      if (static_cast<int64_t>(d) == p.axis)
        c = checked_index(load(ix, e), n);
      else
        KILN_CHECK(c < x.dims[d], InvalidInput, "gather elements: index dims exceed data dims");
      off += c * xs[d];
    }
    std::memcpy(bytes(y) + e * es, bytes(x) + off * es, es);
  }
}

}  // namespace kiln::engine::ops
