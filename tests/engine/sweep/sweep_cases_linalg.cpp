// Sweep cases: convolution (and deconvolution), matrix multiply, attention.

#include "engine/sweep/sweep.h"

namespace kiln::engine::sweep {
namespace {

using F = DType;

PostOp sum(double scale = 1.0) { return PostOp{PostOp::Sum, {}, scale}; }

struct Conv {
  std::string name;
  Dims x{}, w{};  // w: [O, I/g, k...] ([I, O/g, k...] transposed)
  std::vector<int64_t> stride{}, pre{}, post{}, dilation{},
      output_padding{};  // empty: 1 (stride, dilation) or 0
  int64_t groups = 1;
  bool transposed = false, bias = true;
  std::vector<PostOp> post_ops{};
  DType dtype = F::Float32;
  TensorFormat offered = TensorFormat::Plain;
};

SweepCase conv(const Conv& c, uint32_t seed) {
  size_t ns = c.x.size() - 2;
  auto or_default = [&](const std::vector<int64_t>& v, int64_t d) {
    return v.empty() ? std::vector<int64_t>(ns, d) : v;
  };
  ConvolutionParams p{or_default(c.stride, 1),
                      or_default(c.pre, 0),
                      or_default(c.post, 0),
                      or_default(c.dilation, 1),
                      or_default(c.output_padding, 0),
                      c.groups,
                      c.transposed,
                      c.post_ops};
  int64_t out_channels = c.transposed ? c.w[1] * c.groups : c.w[0];
  std::vector<Weights> weights = {random_weights(c.w, seed),
                                  c.bias ? random_weights({out_channels}, seed + 1) : Weights()};
  InputSpec x = in(c.x, c.dtype);
  x.offered = c.offered;
  SweepCase s{c.name, make_layer(LayerKind::Convolution, p, weights), {x}};
  return s;
}

void add_convolutions(std::vector<SweepCase>& cases) {
  using A = ActivationKind;
  std::vector<Conv> list = {
      {.name = "1d_s2_p1", .x = {2, 3, 9}, .w = {4, 3, 3}, .stride = {2}, .pre = {1}, .post = {1}},
      {.name = "2d_g2_d2_pad21_relu",
       .x = {1, 4, 7, 6},
       .w = {6, 2, 3, 3},
       .pre = {2, 1},
       .post = {1, 2},
       .dilation = {2, 2},
       .groups = 2,
       .post_ops = {activation_post_op(A::Relu)}},
      {.name = "2d_3x3_s1_p1_nobias",
       .x = {1, 8, 8, 8},
       .w = {8, 8, 3, 3},
       .pre = {1, 1},
       .post = {1, 1},
       .bias = false},
      {.name = "2d_3x3_winograd_shape",
       .x = {2, 16, 10, 10},
       .w = {16, 16, 3, 3},
       .pre = {1, 1},
       .post = {1, 1}},
      {.name = "2d_depthwise_s2",
       .x = {2, 5, 7, 7},
       .w = {5, 1, 3, 3},
       .stride = {2, 2},
       .pre = {1, 1},
       .groups = 5},
      {.name = "2d_1x1_odd", .x = {1, 7, 5, 3}, .w = {3, 7, 1, 1}},
      {.name = "2d_asym_kernel_stride",
       .x = {1, 3, 9, 8},
       .w = {4, 3, 2, 3},
       .stride = {3, 2},
       .pre = {0, 1},
       .post = {1, 0}},
      {.name = "3d",
       .x = {1, 2, 4, 5, 3},
       .w = {3, 2, 2, 2, 2},
       .stride = {1, 2, 1},
       .pre = {1, 0, 1},
       .post = {0, 1, 1}},
      {.name = "2d_batch0", .x = {0, 3, 5, 5}, .w = {4, 3, 3, 3}},
      {.name = "2d_f16",
       .x = {1, 4, 6, 6},
       .w = {4, 4, 3, 3},
       .pre = {1, 1},
       .post = {1, 1},
       .dtype = F::Float16},
      {.name = "2d_bf16",
       .x = {1, 4, 6, 5},
       .w = {6, 2, 3, 3},
       .stride = {2, 1},
       .pre = {1, 1},
       .post = {1, 1},
       .groups = 2,
       .dtype = F::BFloat16},
      {.name = "2d_post_sigmoid_clip",
       .x = {1, 3, 6, 6},
       .w = {5, 3, 3, 3},
       .pre = {1, 1},
       .post = {1, 1},
       .post_ops = {activation_post_op(A::Sigmoid), activation_post_op(A::Clip, 0.2, 0.7)}},
      {.name = "2d_post_gelu_silu_leaky",
       .x = {1, 3, 5, 5},
       .w = {4, 3, 3, 3},
       .post_ops = {activation_post_op(A::GeluErf), activation_post_op(A::Silu),
                    activation_post_op(A::LeakyRelu, 0.1)}},
      {.name = "2d_blocked_input",
       .x = {1, 9, 5, 5},
       .w = {4, 9, 3, 3},
       .pre = {1, 1},
       .post = {1, 1},
       .offered = TensorFormat::Blocked8c},
      {.name = "deconv2d_s2_outpad",
       .x = {1, 4, 5, 5},
       .w = {4, 3, 3, 3},
       .stride = {2, 2},
       .pre = {1, 1},
       .post = {1, 1},
       .output_padding = {1, 1},
       .transposed = true},
      {.name = "deconv1d_g2_d2",
       .x = {2, 4, 6},
       .w = {4, 3, 3},
       .dilation = {2},
       .groups = 2,
       .transposed = true},
      {.name = "deconv2d_outpad_beyond_padding",
       .x = {1, 2, 4, 4},
       .w = {2, 3, 3, 3},
       .stride = {2, 2},
       .output_padding = {1, 1},
       .transposed = true},
      {.name = "deconv3d_f16",
       .x = {1, 2, 3, 3, 3},
       .w = {2, 2, 2, 2, 2},
       .stride = {2, 2, 2},
       .transposed = true,
       .dtype = F::Float16},
      // Depthwise shapes of every path of cuda's "depthwise_nhwc" (depthwise.cu): 16-byte vectors with the
      // kernel size and stride compiled in (5x5 stride 1 with a row tail, 7x7 stride 2), run-time bounds
      // (dilation), and one channel per thread (a channel count off the vector, asymmetric padding).
      {.name = "2d_depthwise_f16_5x5_silu",
       .x = {2, 24, 9, 11},
       .w = {24, 1, 5, 5},
       .pre = {2, 2},
       .post = {2, 2},
       .groups = 24,
       .post_ops = {activation_post_op(A::Silu)},
       .dtype = F::Float16},
      {.name = "2d_depthwise_f16_7x7_s2_hardswish",
       .x = {2, 32, 15, 15},
       .w = {32, 1, 7, 7},
       .stride = {2, 2},
       .pre = {3, 3},
       .post = {3, 3},
       .groups = 32,
       .post_ops = {activation_post_op(A::HardSwish)},
       .dtype = F::Float16},
      {.name = "2d_depthwise_dilated",
       .x = {1, 16, 12, 12},
       .w = {16, 1, 3, 3},
       .pre = {2, 2},
       .post = {2, 2},
       .dilation = {2, 2},
       .groups = 16},
      // Grouped shapes of cuda's "grouped_nhwc" (grouped.cu): regnet's 24-channel groups with 16-byte
      // vectors at stride 1 (a row tail) and 2; group widths off the vector take the scalar path (above).
      {.name = "2d_grouped_f16_width24_silu",
       .x = {1, 48, 7, 11},
       .w = {48, 24, 3, 3},
       .pre = {1, 1},
       .post = {1, 1},
       .groups = 2,
       .post_ops = {activation_post_op(A::Silu)},
       .dtype = F::Float16},
      {.name = "2d_grouped_bf16_width24_s2",
       .x = {2, 72, 9, 9},
       .w = {72, 24, 3, 3},
       .stride = {2, 2},
       .pre = {1, 1},
       .post = {1, 1},
       .groups = 3,
       .dtype = F::BFloat16},
      {.name = "2d_depthwise_bf16_odd_channels_asym",
       .x = {1, 5, 8, 7},
       .w = {5, 1, 3, 3},
       .stride = {2, 2},
       .pre = {1, 0},
       .post = {0, 1},
       .groups = 5,
       .dtype = F::BFloat16},
  };
  uint32_t seed = 1000;
  for (const Conv& c : list) cases.push_back(conv(c, seed += 10));
  // Sum post-op: the residual is input 1 (same dims as the output), then an activation.
  SweepCase r = conv({.name = "2d_residual_sum_relu",
                      .x = {1, 4, 6, 6},
                      .w = {4, 4, 3, 3},
                      .pre = {1, 1},
                      .post = {1, 1},
                      .post_ops = {sum(0.5), activation_post_op(A::Relu)}},
                     2000);
  r.inputs.push_back(in({1, 4, 6, 6}));
  cases.push_back(r);
  // The same on a depthwise fp16 convolution (the chain runs inside cuda's depthwise kernel).
  SweepCase dw = conv({.name = "2d_depthwise_f16_residual_sum_relu",
                       .x = {1, 16, 6, 6},
                       .w = {16, 1, 3, 3},
                       .pre = {1, 1},
                       .post = {1, 1},
                       .groups = 16,
                       .post_ops = {sum(0.5), activation_post_op(A::Relu)},
                       .dtype = F::Float16},
                      2010);
  dw.inputs.push_back(in({1, 16, 6, 6}, F::Float16));
  cases.push_back(dw);
}

SweepCase matmul(std::string name, Dims a, Dims b, bool ta = false, bool tb = false, DType dtype = F::Float32,
                 std::vector<PostOp> post_ops = {}) {
  return {name,
          make_layer(LayerKind::MatrixMultiply, MatrixMultiplyParams{ta, tb, post_ops}),
          {in(a, dtype), in(b, dtype)}};
}

void add_matmuls(std::vector<SweepCase>& cases) {
  cases.push_back(matmul("2d", {3, 5}, {5, 7}));
  cases.push_back(matmul("batched_broadcast", {2, 1, 4, 6}, {3, 6, 5}));
  cases.push_back(matmul("transpose_a", {2, 6, 4}, {2, 6, 3}, true));
  cases.push_back(matmul("transpose_b", {4, 9}, {2, 5, 9}, false, true));
  cases.push_back(matmul("transpose_both", {7, 3}, {5, 7}, true, true));
  cases.push_back(matmul("k1", {5, 1}, {1, 6}));
  cases.push_back(matmul("m0", {0, 4}, {4, 3}));
  cases.push_back(matmul("f16", {2, 5, 8}, {2, 8, 3}, false, false, F::Float16));
  cases.push_back(matmul("bf16_tb", {6, 8}, {4, 8}, false, true, F::BFloat16));
  cases.push_back(matmul("post_tanh", {3, 8}, {8, 4}, false, false, F::Float32,
                         {activation_post_op(ActivationKind::Tanh)}));
  // Constant b (the builder moves it to weights[0]) with a bias [N] and an activation.
  cases.push_back({"const_b_bias_relu",
                   make_layer(LayerKind::MatrixMultiply,
                              MatrixMultiplyParams{false, false, {activation_post_op(ActivationKind::Relu)}},
                              {random_weights({6, 5}, 31), random_weights({5}, 32)}),
                   {in({2, 3, 6})}});
  cases.push_back({"const_b_transposed_bias",
                   make_layer(LayerKind::MatrixMultiply, MatrixMultiplyParams{false, true, {}},
                              {random_weights({5, 6}, 33), random_weights({5}, 34)}),
                   {in({4, 6})}});
  // A residual (Sum post-op) after the product.
  SweepCase r = matmul("residual_sum", {2, 3, 4}, {2, 4, 5}, false, false, F::Float32,
                       {sum(), activation_post_op(ActivationKind::Elu, 1.0)});
  r.inputs.push_back(in({2, 3, 5}));
  cases.push_back(r);
}

SweepCase attention(std::string name, Dims q, Dims k, Dims v, AttentionParams p, DType dtype = F::Float32) {
  return {name, make_layer(LayerKind::Attention, p), {in(q, dtype), in(k, dtype), in(v, dtype)}};
}

void add_attentions(std::vector<SweepCase>& cases) {
  cases.push_back(attention("plain", {2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 4}, {}));
  AttentionParams causal;
  causal.causal = true;
  cases.push_back(attention("causal_rank3", {3, 6, 4}, {3, 6, 4}, {3, 6, 5}, causal));
  AttentionParams scaled;
  scaled.scale = 0.3;
  cases.push_back(attention("scaled_f16", {1, 2, 4, 8}, {1, 2, 4, 8}, {1, 2, 4, 8}, scaled, F::Float16));
  cases.push_back(attention("bf16", {1, 2, 3, 8}, {1, 2, 5, 8}, {1, 2, 5, 8}, {}, F::BFloat16));
  AttentionParams masked;
  masked.has_mask = true;
  SweepCase m = attention("float_mask_broadcast", {2, 2, 4, 8}, {2, 2, 6, 8}, {2, 2, 6, 8}, masked);
  m.inputs.push_back(in({1, 4, 6}));
  cases.push_back(m);
  SweepCase bm = attention("bool_mask", {1, 2, 5, 4}, {1, 2, 5, 4}, {1, 2, 5, 4}, masked);
  bm.inputs.push_back(bools({5, 5}));
  cases.push_back(bm);
  // Views (the builder's attention-view pass): q, k and v read [B, H, S, D] = [2, 2, 5, 4] from projections
  // laid out [B, S, 3 * H * D] (each its own third), the output written [B, S, H * D].
  auto view = [](int64_t offset, int64_t row) {
    return AttentionView{{2, 2, 5, 4}, {5 * row, 4, row, 1}, offset};
  };
  AttentionParams views;
  views.q_view = view(0, 24);
  views.k_view = view(8, 24);
  views.v_view = view(16, 24);
  views.out_view = view(0, 8);
  views.out_dims = {2, 5, 8};
  cases.push_back(attention("views_qkv_out", {2, 5, 24}, {2, 5, 24}, {2, 5, 24}, views));
  AttentionParams causal_views = views;
  causal_views.causal = true;
  cases.push_back(
      attention("views_causal_f16", {2, 5, 24}, {2, 5, 24}, {2, 5, 24}, causal_views, F::Float16));
  AttentionParams q_only;
  q_only.q_view = view(4, 24);
  cases.push_back(attention("view_q_only", {2, 5, 24}, {2, 2, 7, 4}, {2, 2, 7, 4}, q_only));
  // Grouped-query attention (kv_group): 6 query heads over 2 key / value heads, dense and rank 3; then
  // Llama's layout, q [B, S, 6 * 8] and k, v [B, S, 2 * 8] read through views, causal.
  AttentionParams gqa;
  gqa.kv_group = 3;
  cases.push_back(attention("gqa", {2, 6, 5, 8}, {2, 2, 7, 8}, {2, 2, 7, 4}, gqa));
  cases.push_back(attention("gqa_rank3_f16", {6, 5, 8}, {2, 5, 8}, {2, 5, 8}, gqa, F::Float16));
  AttentionParams gqa_views = gqa;
  gqa_views.causal = true;
  gqa_views.q_view = AttentionView{{2, 6, 5, 8}, {5 * 48, 8, 48, 1}, 0};
  gqa_views.k_view = AttentionView{{2, 2, 5, 8}, {5 * 16, 8, 16, 1}, 0};
  gqa_views.v_view = gqa_views.k_view;
  cases.push_back(
      attention("gqa_views_causal_f16", {2, 5, 48}, {2, 5, 16}, {2, 5, 16}, gqa_views, F::Float16));
}

}  // namespace

void add_linalg_cases(std::vector<SweepCase>& cases) {
  add_convolutions(cases);
  add_matmuls(cases);
  add_attentions(cases);
}

}  // namespace kiln::engine::sweep
