#include "kiln/conversion/impl/attention.h"

#include "kiln/conversion/impl/common.h"

namespace kiln::conversion::impl {

engine::Tensor* attention(ConversionContext& ctx, engine::Tensor* q, engine::Tensor* k, engine::Tensor* v,
                          engine::Tensor* mask, bool causal, double scale, int64_t kv_group) {
  engine::AttentionParams p;
  p.causal = causal;
  p.scale = scale;
  p.kv_group = kv_group;
  p.has_mask = mask != nullptr;
  if (mask != nullptr && mask->dtype() != DType::Bool) mask = cast(ctx, mask, q->dtype());
  return ctx.net.add_attention(ctx.name("attention"), q, k, v, mask, p);
}

}  // namespace kiln::conversion::impl
