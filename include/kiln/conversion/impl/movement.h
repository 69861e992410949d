#pragma once
// Data movement: reshape/permute/squeeze/unsqueeze/expand (shuffle), slice/select/split, cat, gather, padding.

#include <optional>
#include <vector>

#include "kiln/conversion/conversion_context.h"
#include "kiln/conversion/converter_args.h"

namespace kiln::conversion::impl {

/// Reshape to `shape` (one entry per output dim; at most one -1; dynamic entries allowed).
engine::Tensor* reshape(ConversionContext& ctx, engine::Tensor* x, const std::vector<SymIntValue>& shape);
/// Permutes dims.
engine::Tensor* permute(ConversionContext& ctx, engine::Tensor* x, std::vector<int64_t> perm);
/// Inserts a dim of size 1 at `dim` (in [0, rank]).
engine::Tensor* unsqueeze(ConversionContext& ctx, engine::Tensor* x, int64_t dim);
/// Removes the given dims (those not of size 1 are kept, as torch does; dynamic dims are assumed not 1 unless
/// `assume_one`).
engine::Tensor* squeeze(ConversionContext& ctx, engine::Tensor* x, std::vector<int64_t> dims);
/// Flattens dims [start, end] into one.
engine::Tensor* flatten(ConversionContext& ctx, engine::Tensor* x, int64_t start, int64_t end);
/// Broadcasts to `shape` (torch.expand: -1 keeps a dim; new leading dims allowed).
engine::Tensor* expand(ConversionContext& ctx, engine::Tensor* x, const std::vector<SymIntValue>& shape);
/// x[..., start:end:step, ...] along dim with torch's clamping (end may be absent = to the end).
engine::Tensor* slice(ConversionContext& ctx, engine::Tensor* x, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step);
/// x.select(dim, index).
engine::Tensor* select(ConversionContext& ctx, engine::Tensor* x, int64_t dim, int64_t index);
/// Concatenation along dim (inputs promoted to a common dtype).
engine::Tensor* cat(ConversionContext& ctx, std::vector<engine::Tensor*> xs, int64_t dim);
/// Splits along dim into pieces of the given static sizes.
std::vector<engine::Tensor*> split(ConversionContext& ctx, engine::Tensor* x, const std::vector<int64_t>& sizes,
                                   int64_t dim);
/// index_select / gather (GatherParams::Default along dim).
engine::Tensor* index_select(ConversionContext& ctx, engine::Tensor* x, int64_t dim, engine::Tensor* index);
/// torch.gather along dim.
engine::Tensor* gather_elements(ConversionContext& ctx, engine::Tensor* x, int64_t dim, engine::Tensor* index);
/// constant_pad_nd with torch's pad list (last dim first, pairs of before/after; negative pads slice).
engine::Tensor* pad(ConversionContext& ctx, engine::Tensor* x, const std::vector<int64_t>& pads, double value,
                    engine::PaddingParams::Mode mode = engine::PaddingParams::Constant);

}  // namespace kiln::conversion::impl
