#include "kiln/conversion/impl/nn.h"

#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/support/error.h"

namespace kiln::conversion::impl {

engine::Tensor* matmul(ConversionContext& ctx, engine::Tensor* a, engine::Tensor* b) {
  KILN_CHECK(a->rank() >= 1 && b->rank() >= 1, InvalidInput, ctx.current_node, ": matmul of a 0-d tensor");
  const bool a_vec = a->rank() == 1, b_vec = b->rank() == 1;
  if (a_vec) a = unsqueeze(ctx, a, 0);
  if (b_vec) b = unsqueeze(ctx, b, 1);
  const DType t = promote_types(a->dtype(), 2, b->dtype(), 2);
  engine::Tensor* y = ctx.net.add_matrix_multiply(ctx.name("matmul"), cast(ctx, a, t), false, cast(ctx, b, t), false);
  if (a_vec && b_vec) return reshape(ctx, y, {});
  if (a_vec) return squeeze(ctx, y, {-2});
  if (b_vec) return squeeze(ctx, y, {-1});
  return y;
}

engine::Tensor* linear(ConversionContext& ctx, engine::Tensor* x, engine::Tensor* w, engine::Tensor* bias) {
  const bool vec = x->rank() == 1;
  if (vec) x = unsqueeze(ctx, x, 0);
  engine::Tensor* y = ctx.net.add_matrix_multiply(ctx.name("matmul"), x, false, cast(ctx, w, x->dtype()), true);
  if (bias != nullptr) {
    y = ctx.net.add_elementwise(ctx.name("bias"), y, cast(ctx, bias, y->dtype()), engine::ElementwiseOp::Add);
  }
  return vec ? squeeze(ctx, y, {0}) : y;
}

namespace {
std::vector<int64_t> per_dim(std::vector<int64_t> v, int64_t n, int64_t fill, const std::string& what,
                             const std::string& node) {
  if (v.empty()) v.assign(n, fill);
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  KILN_CHECK(static_cast<int64_t>(v.size()) == n, InvalidInput, node, ": ", what, " has ", v.size(),
             " entries for ", n, " spatial dims");
  return v;
}

engine::Weights weights(ConversionContext& ctx, const HostTensor& t, const std::string& name) {
  if (!t.defined()) return engine::Weights();
  HostTensor f = t.dtype() == DType::Float32 ? t : t.to(DType::Float32);
  if (name.empty()) return engine::Weights(f);
  ctx.record_weight(name, f);
  return engine::Weights(name, f);
}
}  // namespace

engine::Tensor* convolution(ConversionContext& ctx, engine::Tensor* x, const HostTensor& weight,
                            const std::string& weight_name, const HostTensor& bias, const std::string& bias_name,
                            std::vector<int64_t> stride, std::vector<int64_t> padding, std::vector<int64_t> dilation,
                            bool transposed, std::vector<int64_t> output_padding, int64_t groups) {
  const int64_t n = weight.dim() - 2;
  KILN_CHECK(n >= 1 && n <= 3, Unsupported, ctx.current_node, ": convolution with ", n, " spatial dims");
  // An unbatched input [C, ...] gets a batch dim for the layer.
  const bool unbatched = x->rank() == n + 1;
  if (unbatched) x = unsqueeze(ctx, x, 0);
  engine::ConvolutionParams p;
  p.stride = per_dim(stride, n, 1, "stride", ctx.current_node);
  p.pre_padding = per_dim(padding, n, 0, "padding", ctx.current_node);
  p.post_padding = p.pre_padding;
  p.dilation = per_dim(dilation, n, 1, "dilation", ctx.current_node);
  p.output_padding = per_dim(output_padding, n, 0, "output_padding", ctx.current_node);
  p.groups = groups;
  p.transposed = transposed;
  engine::Tensor* in = cast(ctx, x, DType::Float32);
  engine::Tensor* y = transposed ? ctx.net.add_deconvolution(ctx.name("deconv"), in, weights(ctx, weight, weight_name),
                                                             weights(ctx, bias, bias_name), p)
                                 : ctx.net.add_convolution(ctx.name("conv"), in, weights(ctx, weight, weight_name),
                                                           weights(ctx, bias, bias_name), p);
  y = cast(ctx, y, x->dtype());
  return unbatched ? squeeze(ctx, y, {0}) : y;
}

engine::Tensor* pool(ConversionContext& ctx, engine::Tensor* x, engine::PoolingParams::Kind kind, int64_t spatial,
                     std::vector<int64_t> kernel, std::vector<int64_t> stride, std::vector<int64_t> padding,
                     std::vector<int64_t> dilation, bool ceil_mode, bool count_include_pad,
                     std::optional<int64_t> divisor_override) {
  KILN_CHECK(!divisor_override, Unsupported, ctx.current_node, ": pooling with divisor_override");
  const bool unbatched = x->rank() == spatial + 1;
  if (unbatched) x = unsqueeze(ctx, x, 0);
  engine::PoolingParams p;
  p.kind = kind;
  p.window = per_dim(kernel, spatial, 1, "kernel_size", ctx.current_node);
  p.stride = stride.empty() ? p.window : per_dim(stride, spatial, 1, "stride", ctx.current_node);
  p.pre_padding = per_dim(padding, spatial, 0, "padding", ctx.current_node);
  p.post_padding = p.pre_padding;
  p.dilation = per_dim(dilation, spatial, 1, "dilation", ctx.current_node);
  p.ceil_mode = ceil_mode;
  p.count_include_pad = count_include_pad;
  engine::Tensor* y = ctx.net.add_pooling(ctx.name(kind == engine::PoolingParams::Max ? "max_pool" : "avg_pool"), x, p);
  return unbatched ? squeeze(ctx, y, {0}) : y;
}

engine::Tensor* adaptive_pool(ConversionContext& ctx, engine::Tensor* x, engine::PoolingParams::Kind kind,
                              std::vector<int64_t> output_size) {
  const int64_t spatial = static_cast<int64_t>(output_size.size());
  const bool unbatched = x->rank() == spatial + 1;
  if (unbatched) x = unsqueeze(ctx, x, 0);
  for (int64_t i = 0; i < spatial; ++i) {
    // torch: None (given as -1 here) keeps the input size.
    if (output_size[i] < 0) output_size[i] = x->dims()[x->rank() - spatial + i];
    KILN_CHECK(output_size[i] > 0, Unsupported, ctx.current_node, ": adaptive pooling size on a dynamic dim");
  }
  engine::PoolingParams p;
  p.kind = kind;
  p.adaptive = true;
  p.output_size = output_size;
  engine::Tensor* y = ctx.net.add_pooling(ctx.name("adaptive_pool"), x, p);
  return unbatched ? squeeze(ctx, y, {0}) : y;
}

engine::Tensor* resize(ConversionContext& ctx, engine::Tensor* x, engine::ResizeParams::Mode mode,
                       std::vector<int64_t> output_size, std::vector<double> scales, bool align_corners) {
  engine::ResizeParams p;
  p.mode = mode;
  p.output_size = std::move(output_size);
  p.scales = std::move(scales);
  p.align_corners = align_corners;
  return ctx.net.add_resize(ctx.name("resize"), x, p);
}

engine::Tensor* attention(ConversionContext& ctx, engine::Tensor* q, engine::Tensor* k, engine::Tensor* v,
                          engine::Tensor* mask, bool causal, double scale) {
  engine::AttentionParams p;
  p.causal = causal;
  p.scale = scale;
  p.has_mask = mask != nullptr;
  if (mask != nullptr && mask->dtype() != DType::Bool) mask = cast(ctx, mask, q->dtype());
  return ctx.net.add_attention(ctx.name("attention"), q, k, v, mask, p);
}

}  // namespace kiln::conversion::impl
