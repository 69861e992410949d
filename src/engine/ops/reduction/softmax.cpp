// Softmax layers (params: kiln/engine/ops/reduction/softmax.h): shape inference and the reference kernel.

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Softmax>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "softmax needs 1 input");
  check_float(in[0], "input 0");
  int64_t axis = layer.get<SoftmaxParams>().axis;
  KILN_CHECK(axis >= 0 && axis < static_cast<int64_t>(in[0].dims.size()), InvalidInput, "softmax axis ", axis,
             " out of range");
  return {{in[0].dtype, in[0].dims}};
}

template <>
void run_kind<LayerKind::Softmax>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<SoftmaxParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  Split s = split_at(x.dims, p.axis);
  parallel(args.pool, s.outer * s.inner, 16, [&](int64_t b, int64_t e) {
    for (int64_t oi = b; oi < e; ++oi) {
      int64_t o = oi / s.inner, i = oi % s.inner;
      auto at = [&](int64_t j) { return (o * s.n + j) * s.inner + i; };
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < s.n; ++j) mx = std::max(mx, load(x, at(j)));
      double sum = 0;
      for (int64_t j = 0; j < s.n; ++j) sum += std::exp(load(x, at(j)) - mx);
      for (int64_t j = 0; j < s.n; ++j) {
        double v = load(x, at(j)) - mx;
        store(y, at(j), p.log ? v - std::log(sum) : std::exp(v) / sum);
      }
    }
  });
}

}  // namespace kiln::engine::ops
