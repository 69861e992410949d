#pragma once
// Spatial building blocks: pooling (windowed and adaptive) and resizing over the trailing dims.

#include <optional>
#include <vector>

#include "kiln/conversion/conversion_context.h"

namespace kiln::conversion::impl {

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

}  // namespace kiln::conversion::impl
