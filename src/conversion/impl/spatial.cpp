#include "kiln/conversion/impl/spatial.h"

#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/support/error.h"

namespace kiln::conversion::impl {

engine::Tensor* pool(ConversionContext& ctx, engine::Tensor* x, engine::PoolingParams::Kind kind, int64_t spatial,
                     std::vector<int64_t> kernel, std::vector<int64_t> stride, std::vector<int64_t> padding,
                     std::vector<int64_t> dilation, bool ceil_mode, bool count_include_pad,
                     std::optional<int64_t> divisor_override) {
  KILN_CHECK(!divisor_override, Unsupported, ctx.current_node, ": pooling with divisor_override");
  const bool unbatched = x->rank() == spatial + 1;
  if (unbatched) x = unsqueeze(ctx, x, 0);
  engine::PoolingParams p;
  p.kind = kind;
  p.window = per_spatial_dim(kernel, spatial, 1, "kernel_size", ctx.current_node);
  p.stride = stride.empty() ? p.window : per_spatial_dim(stride, spatial, 1, "stride", ctx.current_node);
  p.pre_padding = per_spatial_dim(padding, spatial, 0, "padding", ctx.current_node);
  p.post_padding = p.pre_padding;
  p.dilation = per_spatial_dim(dilation, spatial, 1, "dilation", ctx.current_node);
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

}  // namespace kiln::conversion::impl
