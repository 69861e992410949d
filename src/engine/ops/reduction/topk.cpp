// TopK layers (params: kiln/engine/ops/reduction/topk.h): shape inference and the reference kernel.

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::TopK>(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<TopKParams>();
  KILN_CHECK(in.size() == 1 || in.size() == 2, InvalidInput, "topk takes 1 or 2 inputs");
  KILN_CHECK(in[0].dtype != DType::Bool, InvalidInput, "topk on Bool");
  int64_t rank = static_cast<int64_t>(in[0].dims.size());
  KILN_CHECK(p.axis >= 0 && p.axis < rank, InvalidInput, "topk axis ", p.axis, " out of range for rank ",
             rank);
  int64_t k = p.k;
  if (in.size() == 2) {
    auto v = shape_value(in[1], "k input");
    k = v ? (*v).at(0) : kUnknown;
  }
  int64_t n = in[0].dims[p.axis];
  KILN_CHECK(k < 0 && in.size() == 2 ? true : (k >= 0 && (n < 0 || k <= n)), InvalidInput, "topk k=", k,
             " out of range for axis size ", n);
  Dims out = in[0].dims;
  out[p.axis] = k;
  return {{in[0].dtype, out}, {DType::Int64, out}};
}

template <>
void run_kind<LayerKind::TopK>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<TopKParams>();
  const TensorView &x = args.inputs[0], &vals = args.outputs[0], &idx = args.outputs[1];
  Split s = split_at(x.dims, p.axis);
  int64_t k = vals.dims[p.axis];
  std::vector<int64_t> order(static_cast<size_t>(s.n));
  std::vector<double> row(static_cast<size_t>(s.n));
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      for (int64_t j = 0; j < s.n; ++j) row[j] = load(x, (o * s.n + j) * s.inner + i);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        double va = row[a], vb = row[b];
        if (std::isnan(va) || std::isnan(vb)) return p.largest ? (std::isnan(va) && !std::isnan(vb)) : false;
        return p.largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t at = (o * k + j) * s.inner + i;
        store(vals, at, row[order[j]]);
        store(idx, at, static_cast<double>(order[j]));
      }
    }
}

}  // namespace kiln::engine::ops
