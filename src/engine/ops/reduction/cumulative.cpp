// Cumulative layers (params: kiln/engine/ops/reduction/cumulative.h): shape inference and the reference
// kernel.

#include <cmath>
#include <limits>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Cumulative>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "cumulative needs 1 input");
  KILN_CHECK(in[0].dtype != DType::Bool, InvalidInput, "cumulative on Bool");
  int64_t axis = layer.get<CumulativeParams>().axis;
  KILN_CHECK(axis >= 0 && axis < static_cast<int64_t>(in[0].dims.size()), InvalidInput, "cumulative axis ",
             axis, " out of range");
  return {{in[0].dtype, in[0].dims}};
}

template <>
void run_kind<LayerKind::Cumulative>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<CumulativeParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  Split s = split_at(x.dims, p.axis);
  double init = p.op == CumulativeParams::Sum    ? 0.0
                : p.op == CumulativeParams::Prod ? 1.0
                : p.op == CumulativeParams::Max  ? -std::numeric_limits<double>::infinity()
                                                 : std::numeric_limits<double>::infinity();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      double acc = init;
      for (int64_t t = 0; t < s.n; ++t) {
        int64_t j = p.reverse ? s.n - 1 - t : t;
        int64_t at = (o * s.n + j) * s.inner + i;
        double v = load(x, at);
        double next = p.op == CumulativeParams::Sum    ? acc + v
                      : p.op == CumulativeParams::Prod ? acc * v
                      // A NaN propagates through max and min from where it appears, as in torch.cummax.
                      : p.op == CumulativeParams::Max ? (std::isnan(v) || v > acc ? v : acc)
                                                      : (std::isnan(v) || v < acc ? v : acc);
        store(y, at, p.exclusive ? acc : next);
        acc = next;
      }
    }
}

}  // namespace kiln::engine::ops
