#pragma once
// Symmetric INT8 quantization math shared by every backend's INT8 tactics: per-output-channel weight scales
// and the quantized weights, and the rounding of one value. Activations use one scale per tensor, from its
// dynamic range (DynamicRange::scale()).

#include <cstdint>
#include <vector>

namespace kiln::engine::ops {

/// Weights quantized to s8 with one scale per output channel: value ~= q * scales[channel].
struct QuantizedWeights {
  std::vector<int8_t> values;  // same layout as the fp32 weights
  std::vector<float> scales;  // per channel: max |w| over the channel / max_level (1 for an all-zero channel)
};

/// Quantizes `weights`, laid out as [outer, channels, inner] (a convolution kernel [O, I/g, k...]: outer 1,
/// channels O; a matmul operand b [K, N]: outer K, channels N, inner 1), symmetrically per channel: q =
/// round(w / scale) in [-max_level, max_level]. With `given` scales (Weights::int8_scales, one per channel)
/// that reproduce every weight exactly (w == q x scale for an integer q in [-max_level - 1, max_level]),
/// those scales and integers; otherwise (and without them) scale = max |w| / max_level over the channel.
/// `max_level` is 127 where the kernels multiply every s8 weight exactly, less where they do not (the CPU
/// backend without VNNI: onednn::int8_weight_max). Throws kiln::Error when the sizes disagree.
QuantizedWeights quantize_per_channel(const std::vector<float>& weights, int64_t outer, int64_t channels,
                                      int64_t inner, const std::vector<float>& given = {},
                                      int32_t max_level = 127);

/// round(x / scale) saturated to [lo, hi] (round half away from zero).
int32_t quantize_value(float x, float scale, int32_t lo, int32_t hi);

}  // namespace kiln::engine::ops
