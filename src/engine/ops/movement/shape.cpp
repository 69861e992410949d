// Shape layers (params: kiln/engine/ops/movement/shape.h): shape inference and the reference kernel.

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Shape>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "shape needs 1 input");
  return {{DType::Int64, {static_cast<int64_t>(in[0].dims.size())}}};
}

template <>
void run_kind<LayerKind::Shape>(const Layer& layer, KernelArgs& args) {
  for (size_t i = 0; i < args.inputs[0].dims.size(); ++i)
    store(args.outputs[0], static_cast<int64_t>(i), static_cast<double>(args.inputs[0].dims[i]));
}

}  // namespace kiln::engine::ops
