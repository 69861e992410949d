// Cast layers (params: kiln/engine/ops/pointwise/cast.h): shape inference and the reference kernel.

#include <algorithm>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/scalar_ops.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Cast>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "cast needs 1 input");
  return {{layer.get<CastParams>().to, in[0].dims}};
}

template <>
void run_kind<LayerKind::Cast>(const Layer& layer, KernelArgs& args) {
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  if (is_integral(x.dtype) && is_integral(y.dtype)) {  // exactly, saturating as a store from double does
    const IntRange r = int_range(y.dtype);
    parallel(args.pool, y.numel(), kPointwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) store_int(y, i, std::clamp(load_int(x, i), r.lo, r.hi));
    });
    return;
  }
  unary_map(args, [](double x) { return x; });
}

}  // namespace kiln::engine::ops
