#include "kiln/conversion/impl/linalg.h"

#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/support/dtype_promotion.h"
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
engine::Weights weights(ConversionContext& ctx, const HostTensor& t, const std::string& name) {
  if (!t.defined()) return engine::Weights();
  HostTensor f = t.dtype() == DType::Float32 ? t : t.to(DType::Float32);
  if (!name.empty()) ctx.record_weight(name, f);
  return ctx.weights(name, f);
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
  p.stride = per_spatial_dim(stride, n, 1, "stride", ctx.current_node);
  p.pre_padding = per_spatial_dim(padding, n, 0, "padding", ctx.current_node);
  p.post_padding = p.pre_padding;
  p.dilation = per_spatial_dim(dilation, n, 1, "dilation", ctx.current_node);
  p.output_padding = per_spatial_dim(output_padding, n, 0, "output_padding", ctx.current_node);
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

}  // namespace kiln::conversion::impl
