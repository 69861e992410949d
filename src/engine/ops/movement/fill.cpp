// Fill layers (params: kiln/engine/ops/movement/fill.h): shape inference and the reference kernel.

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Fill>(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<FillParams>();
  KILN_CHECK(in.size() <= 3, InvalidInput, "fill takes at most 3 inputs");
  Dims dims = p.dims;
  if (!in.empty()) {
    auto v = shape_value(in[0], "fill shape input");
    if (v) {
      dims = *v;
    } else {
      int64_t len = shape_length(in[0]);
      KILN_CHECK(len >= 0, InvalidInput, "fill shape input of dynamic length");
      dims.assign(static_cast<size_t>(len), kUnknown);
    }
  }
  for (size_t i = 1; i < in.size(); ++i) {
    KILN_CHECK(in[i].dims.empty() || (in[i].dims.size() == 1 && in[i].dims[0] == 1), InvalidInput,
               "fill scalar input ", i, " must be 0-D or [1]");
  }
  for (int64_t d : dims) KILN_CHECK(d >= kUnknown, InvalidInput, "fill dim ", d, " is negative");
  if (p.op != FillParams::Constant) {
    KILN_CHECK(dims.size() == 1, InvalidInput, "arange/linspace fill must be 1-D");
    KILN_CHECK(p.dtype != DType::Bool, InvalidInput, "arange/linspace of Bool");
  }
  return {{p.dtype, dims}};
}

template <>
void run_kind<LayerKind::Fill>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<FillParams>();
  const TensorView& y = args.outputs[0];
  double start = args.inputs.size() > 1 ? load(args.inputs[1], 0) : p.value;
  double delta = args.inputs.size() > 2 ? load(args.inputs[2], 0) : p.delta;
  int64_t n = y.numel();
  for (int64_t i = 0; i < n; ++i) {
    double v = p.op == FillParams::Constant ? start
               : p.op == FillParams::Arange
                   ? start + static_cast<double>(i) * delta
                   : (n == 1 ? start
                             : start + (delta - start) * static_cast<double>(i) / static_cast<double>(n - 1));
    store(y, i, v);
  }
}

}  // namespace kiln::engine::ops
