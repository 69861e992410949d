#pragma once
// A double-precision reference for Attention layers whose operands and output go through strided views
// (AttentionView), shared by the view tests on every backend (attention_views_test.cpp) and the cuda tactic
// tests (backends/cuda/attention_views_test.cpp). It addresses the buffers from the views itself: view
// addressing is what those tests check.

#include <algorithm>
#include <cmath>
#include <vector>

#include "kiln/engine/layers.h"
#include "kiln/support/host_tensor.h"

namespace kiln::engine::testing {

/// A view of logical dims [B, H, S, D] with `strides` and `offset` (elements) over a layer tensor's buffer.
inline AttentionView strided_view(Dims dims, std::vector<int64_t> strides, int64_t offset) {
  AttentionView v;
  v.dims = std::move(dims);
  v.strides = std::move(strides);
  v.offset = offset;
  return v;
}

/// Logical element (b, h, s, d) of `t` through `view` (dense [B, H, S, D] when the view is empty).
inline double view_value(const HostTensor& t, const AttentionView& view, int64_t b, int64_t h, int64_t s,
                         int64_t d) {
  if (view.empty()) {
    const Dims& x = t.sizes();
    return t.get_as_double(((b * x[1] + h) * x[2] + s) * x[3] + d);
  }
  return t.get_as_double(view.offset + b * view.strides[0] + h * view.strides[1] + s * view.strides[2] +
                         d * view.strides[3]);
}

/// softmax(q k^T / sqrt(E), causal and a Bool mask [B, 1, Lq, Lk] (0 masks) as p says) v in double, for
/// inputs {q, k, v[, mask]} read through p's views. The result is laid out as the layer's output buffer of
/// `out_numel` elements (-1: dense [B, H, Lq, Ev]): dense, or through p.out_view, NaN where nothing is
/// written.
inline std::vector<double> attention_reference(const std::vector<HostTensor>& in, const AttentionParams& p,
                                               int64_t out_numel = -1) {
  auto logical = [&](int i) { return p.view(i).empty() ? in[i].sizes() : p.view(i).dims; };
  const Dims qd = logical(0), kd = logical(1), vd = logical(2);
  const int64_t nb = qd[0], nh = qd[1], lq = qd[2], e = qd[3], lk = kd[2], ev = vd[3];
  if (out_numel < 0) out_numel = nb * nh * lq * ev;
  const double scale = 1.0 / std::sqrt(static_cast<double>(e));
  std::vector<double> y(static_cast<size_t>(out_numel), std::nan(""));
  std::vector<double> s(static_cast<size_t>(lk));
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t h = 0; h < nh; ++h)
      for (int64_t i = 0; i < lq; ++i) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < lk; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < e; ++c)
            acc += view_value(in[0], p.q_view, b, h, i, c) * view_value(in[1], p.k_view, b, h, j, c);
          const bool masked =
              (p.causal && j > i) || (p.has_mask && in[3].get_as_double((b * lq + i) * lk + j) == 0);
          s[j] = masked ? -INFINITY : acc * scale;
          mx = std::max(mx, s[j]);
        }
        // Every key masked: probabilities 0 and the output 0 (torch's safe softmax).
        double sum = 0;
        for (int64_t j = 0; j < lk; ++j) sum += (s[j] = s[j] == -INFINITY ? 0.0 : std::exp(s[j] - mx));
        for (int64_t c = 0; c < ev; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < lk; ++j) acc += s[j] * view_value(in[2], p.v_view, b, h, j, c);
          int64_t pos = ((b * nh + h) * lq + i) * ev + c;
          if (!p.out_view.empty()) {
            const auto& o = p.out_view;
            pos = o.offset + b * o.strides[0] + h * o.strides[1] + i * o.strides[2] + c * o.strides[3];
          }
          y[static_cast<size_t>(pos)] = sum == 0 ? acc : acc / sum;
        }
      }
  return y;
}

}  // namespace kiln::engine::testing
