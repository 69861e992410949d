// Constant layers (params: kiln/engine/ops/movement/constant.h): shape inference and the reference kernel.

#include <cstring>

#include "engine/ops/kind_ops.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Constant>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.empty() && layer.weights.size() == 1 && layer.weights[0].defined(), InvalidInput,
             "constant needs one defined weight and no inputs");
  return {{layer.weights[0].value.dtype(), layer.weights[0].value.sizes()}};
}

template <>
void run_kind<LayerKind::Constant>(const Layer& layer, KernelArgs& args) {
  if (args.outputs[0].nbytes())
    std::memcpy(args.outputs[0].data, layer.weights[0].value.data(), args.outputs[0].nbytes());
}

}  // namespace kiln::engine::ops
