// Reduce layers (params: kiln/engine/ops/reduction/reduce.h): shape inference and the reference kernel.

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/name_table.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine {

const char* reduce_op_name(ReduceOp op) {
  static const char* const kNames[] = {"sum", "mean", "max", "min", "prod", "any", "all", "argmax", "argmin"};
  return ops::name_of(kNames, op);
}

namespace ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Reduce>(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "reduce needs 1 input");
  const auto& p = layer.get<ReduceParams>();
  int64_t rank = static_cast<int64_t>(in[0].dims.size());
  std::set<int64_t> axes;
  for (int64_t a : p.axes) {
    KILN_CHECK(a >= 0 && a < rank, InvalidInput, "reduce axis ", a, " out of range for rank ", rank);
    KILN_CHECK(axes.insert(a).second, InvalidInput, "reduce axis ", a, " repeated");
  }
  DType dt = in[0].dtype;
  if (p.op == ReduceOp::Any || p.op == ReduceOp::All) {
    KILN_CHECK(dt == DType::Bool, InvalidInput, "any/all need a Bool input");
  } else if (p.op == ReduceOp::ArgMax || p.op == ReduceOp::ArgMin) {
    KILN_CHECK(axes.size() == 1, InvalidInput, "argmax/argmin take exactly one axis");
    dt = DType::Int64;
  } else {
    KILN_CHECK(dt != DType::Bool, InvalidInput, reduce_op_name(p.op), " on a Bool input");
    if (p.op == ReduceOp::Mean) check_float(in[0], "input 0");
  }
  Dims out;
  for (int64_t i = 0; i < rank; ++i) {
    if (axes.count(i)) {
      KILN_CHECK(in[0].dims[i] != 0 || p.op == ReduceOp::Sum || p.op == ReduceOp::Prod ||
                     p.op == ReduceOp::Any || p.op == ReduceOp::All,
                 InvalidInput, reduce_op_name(p.op), " over an empty axis ", i);
      if (p.keep_dims) out.push_back(1);
    } else {
      out.push_back(in[0].dims[i]);
    }
  }
  return {{dt, out}};
}

template <>
void run_kind<LayerKind::Reduce>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<ReduceParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  if (p.op == ReduceOp::ArgMax || p.op == ReduceOp::ArgMin) {
    Split s = split_at(x.dims, p.axes[0]);
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t best = 0;
        double bv = load(x, o * s.n * s.inner + i);
        for (int64_t j = 1; j < s.n; ++j) {
          double v = load(x, (o * s.n + j) * s.inner + i);
          if (std::isnan(bv)) break;
          bool better = p.op == ReduceOp::ArgMax ? (v > bv || std::isnan(v)) : (v < bv || std::isnan(v));
          if (better) {
            bv = v;
            best = j;
          }
        }
        store(y, o * s.inner + i, static_cast<double>(best));
      }
    return;
  }
  size_t rank = x.dims.size();
  Dims kept = x.dims;
  for (int64_t a : p.axes) kept[a] = 1;
  std::vector<int64_t> ostr = contiguous_strides(kept);
  for (int64_t a : p.axes) ostr[a] = 0;
  int64_t on = checked_numel(kept);
  double init = 0;
  switch (p.op) {
    case ReduceOp::Max: init = -std::numeric_limits<double>::infinity(); break;
    case ReduceOp::Min: init = std::numeric_limits<double>::infinity(); break;
    case ReduceOp::Prod:
    case ReduceOp::All: init = 1; break;
    default: break;
  }
  std::vector<double> acc(static_cast<size_t>(on), init);
  std::vector<int64_t> idx(rank, 0);
  int64_t n = x.numel(), cur = 0;
  for (int64_t e = 0; e < n; ++e) {
    double v = load(x, e);
    double& a = acc[cur];
    switch (p.op) {
      case ReduceOp::Sum:
      case ReduceOp::Mean: a += v; break;
      case ReduceOp::Max: a = (std::isnan(v) || std::isnan(a)) ? NAN : std::max(a, v); break;
      case ReduceOp::Min: a = (std::isnan(v) || std::isnan(a)) ? NAN : std::min(a, v); break;
      case ReduceOp::Prod: a *= v; break;
      case ReduceOp::Any: a = (a != 0 || v != 0); break;
      case ReduceOp::All: a = (a != 0 && v != 0); break;
      default: break;
    }
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++idx[d] < x.dims[d]) {
        cur += ostr[d];
        break;
      }
      cur -= ostr[d] * (x.dims[d] - 1);
      idx[d] = 0;
    }
  }
  if (p.op == ReduceOp::Mean) {
    int64_t cnt = on ? n / on : 1;
    for (double& a : acc) a /= static_cast<double>(cnt);
  }
  store_all(y, acc);
}

}  // namespace ops
}  // namespace kiln::engine
