#pragma once
// Attention layers: fused scaled-dot-product attention.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// A strided view through which an Attention layer reads one operand from (or writes its output into) the
/// buffer of a layer tensor: logical element (b, h, s, d) of `dims` [B, H, S, D] is element
/// offset + b*strides[0] + h*strides[1] + s*strides[2] + d*strides[3] of the tensor's dense (C-order) buffer.
/// strides[3] is 1 (rows of D contiguous), the others >= 0. Empty dims: the tensor itself, dense (no view).
/// Made by the builder's attention-view pass (src/engine/core/attention_views.cpp), never by converters.
struct AttentionView {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  bool empty() const { return dims.empty(); }
  KILN_VISIT_FIELDS(v("dims", dims); v("strides", strides); v("offset", offset))
};

/// softmax(q k^T * scale + mask) v over inputs [q [..,Lq,E], k [..,Lk,E], v [..,Lk,Ev], mask?]; mask is
/// Bool (true = keep) or additive float, broadcastable to [..,Lq,Lk]. scale <= 0 means 1/sqrt(E).
/// Causal masks key j > query i (top-left aligned, as torch). A row whose keys are all masked attends to
/// nothing: its probabilities are 0 and its output 0 x v (torch 2.x's "safe" softmax in
/// scaled_dot_product_attention), where a plain softmax would give NaN.
/// Views (rank-4 logical operands only): q_view/k_view/v_view read that operand through a strided view of
/// the layer input (whose dims are then those of the viewed buffer, not [..,L,E]); out_view writes the
/// output [B, H, Lq, Ev] into an output tensor of dims `out_dims` (a permutation of its elements: every
/// element is written once). The mask stays dense over the logical scores [B, H, Lq, Lk].
/// Grouped-query attention (kv_group > 1, rank >= 3): k and v carry H / kv_group heads (dim -3; a view's dims
/// are those of the kv heads) and query head h reads kv head h / kv_group, as torch's enable_gqa: a key and
/// value shared by kv_group consecutive query heads without being copied to each.
struct AttentionParams {
  bool causal = false;
  double scale = 0.0;
  bool has_mask = false;
  AttentionView q_view, k_view, v_view, out_view;
  std::vector<int64_t> out_dims;
  int64_t kv_group = 1;  // (plan format 11)
  KILN_VISIT_FIELDS(v("causal", causal); v("scale", scale); v("has_mask", has_mask); v("q_view", q_view);
                    v("k_view", k_view); v("v_view", v_view); v("out_view", out_view);
                    v("out_dims", out_dims); v("kv_group", kv_group))
  /// The view of operand i (0 q, 1 k, 2 v, 3 the output).
  const AttentionView& view(int i) const {
    return i == 0 ? q_view : i == 1 ? k_view : i == 2 ? v_view : out_view;
  }
  AttentionView& view(int i) { return i == 0 ? q_view : i == 1 ? k_view : i == 2 ? v_view : out_view; }
  bool has_views() const {
    return !q_view.empty() || !k_view.empty() || !v_view.empty() || !out_view.empty();
  }
};

}  // namespace kiln::engine
