#pragma once
// Kernels that follow a ChannelsLast input (a convolution's output) rather than ask for Plain, so that
// activation, squeeze-excite and pooling chains between channels-last convolutions need no reformats: the
// formats of pointwise layers and the layout facts they and the reductions share, for every backend.

#include <cstddef>

#include "kiln/engine/backend.h"

namespace kiln::engine {

/// `d` left-padded with unit dims to rank `rank`.
Dims padded_to_rank(const Dims& d, size_t rank);

/// Whether a tensor of dims `d`, broadcast to rank `rank`, lies in memory the same in Plain and ChannelsLast
/// order (one channel, or no spatial extent: a [N, C, 1, 1] squeeze-excite scale, a bias, a scalar).
bool same_in_channels_last(const Dims& d, size_t rank);

/// The dims of a tensor as ChannelsLast stores them ([N, spatial..., C]) after padding to `rank`.
Dims channels_last_order(const Dims& d, size_t rank);

/// The formats of a pointwise layer: when an input of the output's rank (3-5) comes in ChannelsLast, the
/// output is written in ChannelsLast, inputs that lie the same in both orders are read as they are and the
/// other inputs of that rank in ChannelsLast. All Plain otherwise (and where a lower-rank input or a weight
/// would lie differently).
TacticFormats pointwise_formats(const LayerInfo& info);

/// The dims by which a pointwise kernel addresses an operand of dims `d` stored in `format`, for an output of
/// rank `rank` stored in `out_format`: `d` itself for a Plain output, else its storage order
/// (channels_last_order). Throws kiln::Error(Internal) for formats pointwise_formats never gives.
Dims pointwise_operand_dims(const Dims& d, TensorFormat format, TensorFormat out_format, size_t rank);

}  // namespace kiln::engine
