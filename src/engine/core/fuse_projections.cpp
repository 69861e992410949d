// The projection-fusion pass: an Attention layer that reads q, k and v through views (attention_views.cpp) of
// three matrix multiplies of one input by constant weights (BERT's query, key and value linears, Llama's
// q/k/v projections) gets one matrix multiply by the weights concatenated along N instead, and reads its
// output at column offsets 0, N_q and N_q + N_k. One library call three times as wide: BERT-base's q/k/v
// projections at batch 32 ran at 355 TFLOPS each on an H100, its FFN matmuls of the fused width at 495.
//
// A view is a (size, stride) per dim plus an offset over the projection's dense [..., N] buffer; over the
// fused
// [..., W] buffer (W the sum of the N's) a dim whose stride is a multiple of N (rows) gets stride / N * W, a
// dim that stays within a row keeps its stride, and the offset moves to its row in the wide buffer plus the
// column offset. Views that mix the two within a dim are left alone. The three projections must have the same
// input, transposes, weight dtype and K, a bias each or none, no post-ops and no INT8 scales, and feed
// nothing but the attention. Refittable and weight-stripped plans keep their weights as the program named
// them: no fusion.

#include <algorithm>
#include <optional>
#include <string>

#include "engine/core/passes.h"
#include "engine/ops/shape_inference.h"
#include "kiln/support/host_math.h"
#include "kiln/support/logging.h"

namespace kiln::engine::passes {
namespace {

/// What one projection contributes: its layer, weights and the width N of its output.
struct Projection {
  int64_t layer = -1;
  const Weights* w = nullptr;
  const Weights* bias = nullptr;  // null when it has none
  int64_t n = 0, k = 0;
};

/// The projection producing `tensor` when it can join a fusion (see the file comment), else nothing.
std::optional<Projection> projection_of(const Plan::Impl& g, int64_t tensor, int64_t attention) {
  const int64_t p = g.tensors[tensor].producer;
  if (p < 0 || sole_consumer(g, tensor) != attention) return std::nullopt;
  const Layer& l = g.layers[p].layer;
  if (l.kind != LayerKind::MatrixMultiply || l.inputs.size() != 1 || l.outputs.size() != 1)
    return std::nullopt;
  const auto& mp = l.get<MatrixMultiplyParams>();
  if (mp.transpose_a || !mp.post_ops.empty() || l.weights.empty() || !l.weights[0].defined())
    return std::nullopt;
  const Weights& w = l.weights[0];
  const Dims& y = g.tensors[tensor].dims;
  if (w.value.sizes().size() != 2 || !w.int8_scales.empty() || !dims_known(y) || y.empty())
    return std::nullopt;
  Projection out;
  out.layer = p;
  out.w = &w;
  out.n = mp.transpose_b ? w.value.sizes()[0] : w.value.sizes()[1];
  out.k = mp.transpose_b ? w.value.sizes()[1] : w.value.sizes()[0];
  if (y.back() != out.n) return std::nullopt;
  if (l.weights.size() > 1 && l.weights[1].defined()) {
    out.bias = &l.weights[1];
    if (out.bias->value.numel() != out.n || out.bias->value.dtype() != w.value.dtype() ||
        !out.bias->int8_scales.empty()) {
      return std::nullopt;
    }
  }
  return out;
}

/// `v`, a view over a dense [..., n] buffer, as a view over the [..., width] buffer whose columns [column,
/// column + n) hold that buffer's; nothing when a dim neither steps whole rows nor stays within one.
std::optional<AttentionView> widen(const AttentionView& v, int64_t n, int64_t width, int64_t column) {
  AttentionView out = v;
  int64_t last_column = v.offset % n;
  for (size_t d = 0; d < v.dims.size(); ++d) {
    if (v.dims[d] <= 1) continue;
    if (v.strides[d] % n == 0) {
      out.strides[d] = v.strides[d] / n * width;
    } else if ((v.dims[d] - 1) * v.strides[d] < n) {
      last_column += (v.dims[d] - 1) * v.strides[d];
    } else {
      return std::nullopt;
    }
  }
  if (last_column >= n) return std::nullopt;
  out.offset = v.offset / n * width + column + v.offset % n;
  return out;
}

/// Fuses the projections of attention layer `a` when they qualify; whether it did.
bool fuse(Plan::Impl& g, int64_t a) {
  Layer& att = g.layers[a].layer;
  AttentionParams& p = att.get<AttentionParams>();
  const int64_t src[3] = {att.inputs[0], att.inputs[1], att.inputs[2]};
  if (src[0] == src[1] || src[0] == src[2] || src[1] == src[2]) return false;
  Projection proj[3];
  for (int i = 0; i < 3; ++i) {
    if (p.view(i).empty()) return false;
    auto pr = projection_of(g, src[i], a);
    if (!pr) return false;
    proj[i] = *pr;
  }
  const Layer& first = g.layers[proj[0].layer].layer;
  const bool transpose_b = first.get<MatrixMultiplyParams>().transpose_b;
  const Dims& y0 = g.tensors[src[0]].dims;
  for (int i = 1; i < 3; ++i) {
    const Layer& l = g.layers[proj[i].layer].layer;
    const Dims& y = g.tensors[src[i]].dims;
    if (l.inputs[0] != first.inputs[0] || l.get<MatrixMultiplyParams>().transpose_b != transpose_b ||
        proj[i].k != proj[0].k || proj[i].w->value.dtype() != proj[0].w->value.dtype() ||
        (proj[i].bias == nullptr) != (proj[0].bias == nullptr) ||
        g.tensors[src[i]].dtype != g.tensors[src[0]].dtype ||
        !std::equal(y.begin(), y.end() - 1, y0.begin(), y0.end() - 1) || y.size() != y0.size()) {
      return false;
    }
  }
  const int64_t width = proj[0].n + proj[1].n + proj[2].n;
  AttentionView views[3];
  int64_t column = 0;
  for (int i = 0; i < 3; ++i) {
    auto v = widen(p.view(i), proj[i].n, width, column);
    if (!v) return false;
    views[i] = *v;
    column += proj[i].n;
  }

  // Unnamed: no program constant has these values, so refits and engine-cache entries treat them as compiled
  // in (the program's q/k/v weights are then checked by digest, never refitted into the fused ones).
  const DType wt = proj[0].w->value.dtype();
  Weights w(host_cat({proj[0].w->value, proj[1].w->value, proj[2].w->value}, transpose_b ? 0 : 1, wt));
  Weights bias;
  if (proj[0].bias)
    bias = Weights(host_cat({proj[0].bias->value, proj[1].bias->value, proj[2].bias->value}, 0, wt));
  Layer& fused = g.layers[proj[0].layer].layer;
  fused.weights = {std::move(w), std::move(bias)};
  g.tensors[src[0]].dims.back() = width;
  for (int i = 0; i < 3; ++i) {
    p.view(i) = views[i];
    att.inputs[i] = src[0];
  }
  // The other two projections now feed nothing: dead-layer removal drops them.
  KILN_INFO("engine: attention '", att.name, "' reads q/k/v from one matrix multiply '", fused.name, "' of ",
            width, " columns (", g.layers[proj[1].layer].layer.name, " and ",
            g.layers[proj[2].layer].layer.name, " folded into it)");
  return true;
}

}  // namespace

int fuse_attention_projections(Plan::Impl& g) {
  if (g.refittable || g.strip_weights) return 0;
  int fused = 0;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const Layer& l = g.layers[i].layer;
    if (l.kind != LayerKind::Attention || l.inputs.size() < 3 || l.outputs.size() != 1) continue;
    if (fuse(g, static_cast<int64_t>(i))) ++fused;
  }
  return fused;
}

}  // namespace kiln::engine::passes
