// NonZero layers (params: kiln/engine/ops/movement/nonzero.h): shape inference and the reference kernel.

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::NonZero>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "nonzero needs 1 input");
  return {{DType::Int64, {kUnknown, static_cast<int64_t>(in[0].dims.size())}, true}};
}

template <>
void run_kind<LayerKind::NonZero>(const Layer& layer, KernelArgs& args) {
  const TensorView& x = args.inputs[0];
  TensorView& y = args.outputs[0];
  size_t r = x.dims.size();
  auto xs = contiguous_strides(x.dims);
  int64_t count = 0;
  for (int64_t e = 0; e < x.numel(); ++e) {
    if (load(x, e) == 0) continue;
    int64_t rem = e;
    for (size_t d = 0; d < r; ++d) {
      store(y, count * static_cast<int64_t>(r) + static_cast<int64_t>(d), static_cast<double>(rem / xs[d]));
      rem %= xs[d];
    }
    ++count;
  }
  y.dims = {count, static_cast<int64_t>(r)};
}

}  // namespace kiln::engine::ops
