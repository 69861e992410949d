#pragma once
// Linear-algebra building blocks: matrix multiply, linear, convolution.

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

}  // namespace kiln::conversion::impl
