#pragma once
// Network building blocks: matrix multiply, linear, convolution, pooling, resize, attention.

#include <optional>
#include <vector>

#include "kiln/conversion/conversion_context.h"

namespace kiln::conversion::impl {

/// torch.matmul semantics for ranks >= 1 (1-D operands get a temporary dim, removed after).
engine::Tensor* matmul(ConversionContext& ctx, engine::Tensor* a, engine::Tensor* b);
/// x @ w^T + bias with w [N, K] a tensor (a constant for weights), bias optional.
engine::Tensor* linear(ConversionContext& ctx, engine::Tensor* x, engine::Tensor* w, engine::Tensor* bias);
/// Convolution (or transposed) with torch's arguments; bias may be undefined. Handles 1-D/2-D/3-D and
/// kernel/bias weights named for refit.
engine::Tensor* convolution(ConversionContext& ctx, engine::Tensor* x, const HostTensor& weight,
                            const std::string& weight_name, const HostTensor& bias, const std::string& bias_name,
                            std::vector<int64_t> stride, std::vector<int64_t> padding, std::vector<int64_t> dilation,
                            bool transposed, std::vector<int64_t> output_padding, int64_t groups);
/// Max/average pooling over the trailing `spatial` dims.
engine::Tensor* pool(ConversionContext& ctx, engine::Tensor* x, engine::PoolingParams::Kind kind, int64_t spatial,
                     std::vector<int64_t> kernel, std::vector<int64_t> stride, std::vector<int64_t> padding,
                     std::vector<int64_t> dilation, bool ceil_mode, bool count_include_pad,
                     std::optional<int64_t> divisor_override = std::nullopt);
/// Adaptive average/max pooling to `output_size` over the trailing dims.
engine::Tensor* adaptive_pool(ConversionContext& ctx, engine::Tensor* x, engine::PoolingParams::Kind kind,
                              std::vector<int64_t> output_size);
/// Resize the trailing dims to output_size or by scales.
engine::Tensor* resize(ConversionContext& ctx, engine::Tensor* x, engine::ResizeParams::Mode mode,
                       std::vector<int64_t> output_size, std::vector<double> scales, bool align_corners);
/// Fused scaled-dot-product attention; mask may be null; scale <= 0 means 1/sqrt(E).
engine::Tensor* attention(ConversionContext& ctx, engine::Tensor* q, engine::Tensor* k, engine::Tensor* v,
                          engine::Tensor* mask, bool causal, double scale);

}  // namespace kiln::conversion::impl
