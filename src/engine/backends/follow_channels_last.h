#pragma once
// Kernels that follow a ChannelsLast input (a convolution's output) rather than ask for Plain, so that
// activation, squeeze-excite and pooling chains between channels-last convolutions need no reformats: the
// formats of pointwise layers and the layout facts they and the reductions share, for every backend. The cpu
// pointwise kernels follow a blocked input (Blocked8c / Blocked16c, oneDNN's nChw8c / nChw16c) the same way
// where the channels fill whole blocks.

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

/// pointwise_formats, and also following a Blocked8c / Blocked16c input of the output's rank when the
/// output's channels (dim 1) are a whole number of blocks (no padded lanes): then inputs that lie the same in
/// Plain and in that blocked order (one channel, or all channels and no spatial extent: a squeeze-excite
/// scale) are read as they are, the others of that rank in the blocked format.
TacticFormats pointwise_formats_following_blocked(const LayerInfo& info);

/// The dims by which a pointwise kernel addresses an operand of dims `d` stored in `format`, for an output of
/// rank `rank` stored in `out_format`: `d` itself for a Plain output, else its storage order
/// (channels_last_order; for a blocked output of L lanes [N, C / L, spatial..., L], or [N, 1, spatial..., 1]
/// for one channel). Throws kiln::Error(Internal) for formats pointwise_formats(_following_blocked) never
/// gives.
Dims pointwise_operand_dims(const Dims& d, TensorFormat format, TensorFormat out_format, size_t rank);

}  // namespace kiln::engine
