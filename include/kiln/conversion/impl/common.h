#pragma once
// Building blocks shared by every converter: constants, casts, type promotion, dim normalization.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/conversion/conversion_context.h"
#include "kiln/engine/network.h"

namespace kiln::conversion::impl {

/// A constant layer holding `value`; when `refit_name` is non-empty the weight is named so and recorded in the
/// context's refit map.
engine::Tensor* constant(ConversionContext& ctx, const HostTensor& value, const std::string& refit_name = "");
/// A 0-d constant of `dtype` holding `value`.
engine::Tensor* scalar(ConversionContext& ctx, double value, DType dtype);
/// A 1-D Int64 constant.
engine::Tensor* int64s(ConversionContext& ctx, const std::vector<int64_t>& values);
/// `t` cast to `dtype` (t itself when it already has it).
engine::Tensor* cast(ConversionContext& ctx, engine::Tensor* t, DType dtype);
/// `t` unchanged but as a new tensor (for outputs that alias inputs or other outputs).
engine::Tensor* identity(ConversionContext& ctx, engine::Tensor* t);

/// A dim index in [0, rank) from a possibly negative one; throws kiln::Error naming `what` when out of range.
int64_t normalize_dim(int64_t dim, int64_t rank, const std::string& what);
/// A window argument (stride, padding, kernel size, ...) with one entry per spatial dim: `fill` in every entry
/// when empty, its one entry repeated when it has one; throws kiln::Error(InvalidInput) naming `node` and `what`
/// when it then has other than `n` entries.
std::vector<int64_t> per_spatial_dim(std::vector<int64_t> v, int64_t n, int64_t fill, const std::string& what,
                                     const std::string& node);

}  // namespace kiln::conversion::impl
