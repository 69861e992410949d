// Activation layers (params: kiln/engine/ops/pointwise/activation.h): shape inference and the reference
// kernel.

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/name_table.h"
#include "engine/ops/scalar_ops.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine {

const char* activation_kind_name(ActivationKind kind) {
  static const char* const kNames[] = {"relu", "sigmoid",   "tanh",        "gelu_erf",   "gelu_tanh",
                                       "silu", "hardswish", "hardsigmoid", "leaky_relu", "elu",
                                       "selu", "softplus",  "softsign",    "clip",       "mish"};
  return ops::name_of(kNames, kind);
}

namespace ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Activation>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "activation needs 1 input");
  check_float(in[0], "input 0");
  return {{in[0].dtype, in[0].dims}};
}

template <>
void run_kind<LayerKind::Activation>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<ActivationParams>();
  unary_map(args, [&](double x) { return apply_activation(p, x); });
}

}  // namespace ops
}  // namespace kiln::engine
