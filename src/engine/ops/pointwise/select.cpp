// Select layers (params: kiln/engine/ops/pointwise/select.h): shape inference and the reference kernel.

#include <cstring>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Select>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 3, InvalidInput, "select needs condition, then, else");
  KILN_CHECK(in[0].dtype == DType::Bool, InvalidInput, "select condition must be Bool");
  KILN_CHECK(in[1].dtype == in[2].dtype, InvalidInput, "select then/else dtypes differ");
  return {{in[1].dtype, broadcast_dims(broadcast_dims(in[0].dims, in[1].dims), in[2].dims)}};
}

template <>
void run_kind<LayerKind::Select>(const Layer& layer, KernelArgs& args) {
  const TensorView &c = args.inputs[0], &a = args.inputs[1], &b = args.inputs[2], &y = args.outputs[0];
  auto oc = broadcast_offsets(c.dims, y.dims);
  auto oa = broadcast_offsets(a.dims, y.dims);
  auto ob = broadcast_offsets(b.dims, y.dims);
  size_t es = dtype_size(y.dtype);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const uint8_t* src = load(c, oc[i]) != 0 ? static_cast<const uint8_t*>(a.data) + oa[i] * es
                                             : static_cast<const uint8_t*>(b.data) + ob[i] * es;
    std::memcpy(static_cast<uint8_t*>(y.data) + i * es, src, es);
  }
}

}  // namespace kiln::engine::ops
