#pragma once
// Attention building block: fused scaled-dot-product attention.

#include "kiln/conversion/conversion_context.h"

namespace kiln::conversion::impl {

/// Fused scaled-dot-product attention; mask may be null; scale <= 0 means 1/sqrt(E).
engine::Tensor* attention(ConversionContext& ctx, engine::Tensor* q, engine::Tensor* k, engine::Tensor* v,
                          engine::Tensor* mask, bool causal, double scale);

}  // namespace kiln::conversion::impl
