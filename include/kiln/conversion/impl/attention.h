#pragma once
// Attention building block: fused scaled-dot-product attention.

#include "kiln/conversion/conversion_context.h"

namespace kiln::conversion::impl {

/// Fused scaled-dot-product attention; mask may be null; scale <= 0 means 1/sqrt(E); kv_group > 1: k and v
/// have 1 / kv_group of q's heads (dim -3), each shared by kv_group consecutive query heads (grouped-query
/// attention).
engine::Tensor* attention(ConversionContext& ctx, engine::Tensor* q, engine::Tensor* k, engine::Tensor* v,
                          engine::Tensor* mask, bool causal, double scale, int64_t kv_group = 1);

}  // namespace kiln::conversion::impl
