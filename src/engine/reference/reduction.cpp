// Reference kernels: reduce, softmax, normalization, cumulative, topk.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/reference/common.h"
#include "engine/reference/reference.h"

namespace kiln::engine::ref {
namespace {

/// outer / axis / inner split of dims around `axis`.
struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};
Split split_at(const Dims& d, int64_t axis) {
  Split s;
  for (int64_t i = 0; i < axis; ++i) s.outer *= d[i];
  s.n = d[axis];
  for (size_t i = static_cast<size_t>(axis) + 1; i < d.size(); ++i) s.inner *= d[i];
  return s;
}

void reduce(const Layer& layer, KernelArgs& args) {
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
          if (better) { bv = v; best = j; }
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
    case ReduceOp::Prod: case ReduceOp::All: init = 1; break;
    default: break;
  }
  std::vector<double> acc(static_cast<size_t>(on), init);
  std::vector<int64_t> idx(rank, 0);
  int64_t n = x.numel(), cur = 0;
  for (int64_t e = 0; e < n; ++e) {
    double v = load(x, e);
    double& a = acc[cur];
    switch (p.op) {
      case ReduceOp::Sum: case ReduceOp::Mean: a += v; break;
      case ReduceOp::Max: a = (std::isnan(v) || std::isnan(a)) ? NAN : std::max(a, v); break;
      case ReduceOp::Min: a = (std::isnan(v) || std::isnan(a)) ? NAN : std::min(a, v); break;
      case ReduceOp::Prod: a *= v; break;
      case ReduceOp::Any: a = (a != 0 || v != 0); break;
      case ReduceOp::All: a = (a != 0 && v != 0); break;
      default: break;
    }
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++idx[d] < x.dims[d]) { cur += ostr[d]; break; }
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

void softmax(const Layer& layer, KernelArgs& args) {
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

void normalization(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<NormalizationParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  std::vector<double> xv = load_all(x), yv(xv.size());
  std::vector<double> scale, bias;
  if (layer.weights.size() > 0 && layer.weights[0].defined()) {
    for (float f : host_floats(layer.weights[0].value)) scale.push_back(f);
  }
  if (layer.weights.size() > 1 && layer.weights[1].defined()) {
    for (float f : host_floats(layer.weights[1].value)) bias.push_back(f);
  }
  int64_t groups, group_size, channel_size = 0, channels = 0;
  if (p.kind == NormalizationParams::Layer) {
    group_size = 1;
    for (size_t i = static_cast<size_t>(p.axis); i < x.dims.size(); ++i) group_size *= x.dims[i];
    groups = group_size ? x.numel() / group_size : 0;
  } else {
    channels = x.dims[1];
    int64_t g = p.kind == NormalizationParams::Instance ? channels : p.groups;
    channel_size = 1;
    for (size_t i = 2; i < x.dims.size(); ++i) channel_size *= x.dims[i];
    group_size = channels / g * channel_size;
    groups = x.dims[0] * g;
  }
  parallel(args.pool, groups, 1, [&](int64_t b, int64_t e) {
    for (int64_t gi = b; gi < e; ++gi) {
      const double* src = &xv[gi * group_size];
      double mean = 0, var = 0;
      for (int64_t j = 0; j < group_size; ++j) mean += src[j];
      mean /= static_cast<double>(group_size);
      for (int64_t j = 0; j < group_size; ++j) var += (src[j] - mean) * (src[j] - mean);
      var /= static_cast<double>(group_size);
      double inv = 1.0 / std::sqrt(var + p.epsilon);
      for (int64_t j = 0; j < group_size; ++j) {
        int64_t w = p.kind == NormalizationParams::Layer ? j : ((gi * group_size + j) / channel_size) % channels;
        double v = (src[j] - mean) * inv;
        if (!scale.empty()) v *= scale[w];
        if (!bias.empty()) v += bias[w];
        yv[gi * group_size + j] = v;
      }
    }
  });
  store_all(y, yv);
}

void cumulative(const Layer& layer, KernelArgs& args) {
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
                      : p.op == CumulativeParams::Max  ? (std::isnan(v) || v > acc ? v : acc)
                                                       : (std::isnan(v) || v < acc ? v : acc);
        store(y, at, p.exclusive ? acc : next);
        acc = next;
      }
    }
}

void topk(const Layer& layer, KernelArgs& args) {
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

}  // namespace

void execute_reduction(const Layer& layer, KernelArgs& args) {
  switch (layer.kind) {
    case LayerKind::Reduce: reduce(layer, args); return;
    case LayerKind::Softmax: softmax(layer, args); return;
    case LayerKind::Normalization: normalization(layer, args); return;
    case LayerKind::Cumulative: cumulative(layer, args); return;
    case LayerKind::TopK: topk(layer, args); return;
    default: KILN_FAIL(Internal, "execute_reduction: wrong kind ", layer_kind_name(layer.kind));
  }
}

}  // namespace kiln::engine::ref
