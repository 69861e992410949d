// Cast layers (params: kiln/engine/ops/pointwise/cast.h): shape inference and the reference kernel.

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Cast>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "cast needs 1 input");
  return {{layer.get<CastParams>().to, in[0].dims}};
}

template <>
void run_kind<LayerKind::Cast>(const Layer& layer, KernelArgs& args) {
  unary_map(args, [](double x) { return x; });
}

}  // namespace kiln::engine::ops
