// Concat layers (params: kiln/engine/ops/movement/concat.h): shape inference and the reference kernel.

#include <cstring>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Concat>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(!in.empty(), InvalidInput, "concat needs inputs");
  int64_t rank = static_cast<int64_t>(in[0].dims.size());
  int64_t axis = layer.get<ConcatParams>().axis;
  KILN_CHECK(axis >= 0 && axis < rank, InvalidInput, "concat axis ", axis, " out of range for rank ", rank);
  Dims out = in[0].dims;
  for (size_t i = 1; i < in.size(); ++i) {
    KILN_CHECK(in[i].dtype == in[0].dtype, InvalidInput, "input ", i, " dtype differs");
    KILN_CHECK(static_cast<int64_t>(in[i].dims.size()) == rank, InvalidInput, "input ", i, " rank differs");
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis) {
        out[d] = (out[d] < 0 || in[i].dims[d] < 0) ? kUnknown : out[d] + in[i].dims[d];
      } else {
        KILN_CHECK(out[d] < 0 || in[i].dims[d] < 0 || out[d] == in[i].dims[d], InvalidInput, "input ", i,
                   " dims ", dims_str(in[i].dims), " differ from input 0 ", dims_str(in[0].dims),
                   " outside the concat axis");
        if (out[d] < 0) out[d] = in[i].dims[d];
      }
    }
  }
  return {{in[0].dtype, out}};
}

template <>
void run_kind<LayerKind::Concat>(const Layer& layer, KernelArgs& args) {
  int64_t axis = layer.get<ConcatParams>().axis;
  const TensorView& y = args.outputs[0];
  size_t es = dtype_size(y.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= y.dims[i];
  for (size_t i = static_cast<size_t>(axis) + 1; i < y.dims.size(); ++i) inner *= y.dims[i];
  int64_t off = 0;
  for (const auto& x : args.inputs) {
    int64_t chunk = x.dims[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      if (chunk)
        std::memcpy(bytes(y) + (o * y.dims[axis] * inner + off) * es, bytes(x) + o * chunk * es, chunk * es);
    off += chunk;
  }
}

}  // namespace kiln::engine::ops
