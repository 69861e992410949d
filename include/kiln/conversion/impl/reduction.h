#pragma once
// Reductions, softmax and normalizations.

#include <optional>
#include <vector>

#include "kiln/conversion/conversion_context.h"

namespace kiln::conversion::impl {

/// Reduces `x` over `dims` (possibly negative; empty = all dims).
engine::Tensor* reduce(ConversionContext& ctx, engine::Tensor* x, engine::ReduceOp op, std::vector<int64_t> dims,
                       bool keep_dims);
/// Softmax or log-softmax along `dim`.
engine::Tensor* softmax(ConversionContext& ctx, engine::Tensor* x, int64_t dim, bool log);
/// Layer norm over the trailing `normalized_rank` dims, with optional affine weights (named for refit).
engine::Tensor* layer_norm(ConversionContext& ctx, engine::Tensor* x, int64_t normalized_rank, const HostTensor& weight,
                           const std::string& weight_name, const HostTensor& bias, const std::string& bias_name,
                           double eps);
/// RMS norm over the trailing `normalized_rank` dims, x / sqrt(mean(x^2) + eps) * weight (weight optional,
/// named for refit).
engine::Tensor* rms_norm(ConversionContext& ctx, engine::Tensor* x, int64_t normalized_rank,
                         const HostTensor& weight, const std::string& weight_name, double eps);
/// Group norm of [N, C, ...] with per-channel affine weights.
engine::Tensor* group_norm(ConversionContext& ctx, engine::Tensor* x, int64_t groups, const HostTensor& weight,
                           const std::string& weight_name, const HostTensor& bias, const std::string& bias_name,
                           double eps);
/// Inference batch norm of [N, C, ...]: (x - mean) / sqrt(var + eps) * weight + bias as one scale and one shift
/// constant per channel (computed on the host; weight/bias may be undefined).
engine::Tensor* batch_norm(ConversionContext& ctx, engine::Tensor* x, const HostTensor& weight, const HostTensor& bias,
                           const HostTensor& mean, const HostTensor& var, double eps);

}  // namespace kiln::conversion::impl
