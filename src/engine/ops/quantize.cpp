// Symmetric INT8 quantization math (quantize.h).

#include "engine/ops/quantize.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "kiln/support/error.h"

namespace kiln::engine::ops {

int32_t quantize_value(float x, float scale, int32_t lo, int32_t hi) {
  const float q = std::round(x / scale);
  if (!(q >= static_cast<float>(lo))) return lo;  // (NaN goes low)
  return q > static_cast<float>(hi) ? hi : static_cast<int32_t>(q);
}

namespace {

// The weights as q x given[channel] with q in [-max_level - 1, max_level], when that reproduces every one
// exactly.
std::optional<QuantizedWeights> with_given_scales(const std::vector<float>& weights, int64_t outer,
                                                  int64_t channels, int64_t inner,
                                                  const std::vector<float>& given, int32_t max_level) {
  const float lo = -static_cast<float>(max_level) - 1.0f, hi = static_cast<float>(max_level);
  if (static_cast<int64_t>(given.size()) != channels) return std::nullopt;
  for (float s : given) {
    if (!std::isnormal(s) || s < 0.0f) return std::nullopt;
  }
  QuantizedWeights q;
  q.scales = given;
  q.values.resize(weights.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const float w = weights[base + i];
        const float v = std::nearbyint(w / given[c]);
        if (!(v >= lo && v <= hi) || v * given[c] != w) return std::nullopt;
        q.values[base + i] = static_cast<int8_t>(v);
      }
    }
  }
  return q;
}

}  // namespace

QuantizedWeights quantize_per_channel(const std::vector<float>& weights, int64_t outer, int64_t channels,
                                      int64_t inner, const std::vector<float>& given, int32_t max_level) {
  KILN_CHECK(outer > 0 && channels > 0 && inner > 0 &&
                 static_cast<int64_t>(weights.size()) == outer * channels * inner,
             Internal, "quantize_per_channel: ", weights.size(), " weights are not ", outer, " x ", channels,
             " x ", inner);
  KILN_CHECK(max_level >= 1 && max_level <= 127, Internal, "quantize_per_channel: max level ", max_level,
             " is not in [1, 127]");
  if (std::optional<QuantizedWeights> exact =
          with_given_scales(weights, outer, channels, inner, given, max_level))
    return *exact;
  QuantizedWeights q;
  std::vector<float> amax(static_cast<size_t>(channels), 0.0f);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* w = weights.data() + (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) amax[c] = std::max(amax[c], std::fabs(w[i]));
    }
  }
  q.scales.resize(amax.size());
  for (size_t c = 0; c < amax.size(); ++c)
    q.scales[c] = amax[c] > 0.0f ? amax[c] / static_cast<float>(max_level) : 1.0f;
  q.values.resize(weights.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        q.values[base + i] =
            static_cast<int8_t>(quantize_value(weights[base + i], q.scales[c], -max_level, max_level));
      }
    }
  }
  return q;
}

}  // namespace kiln::engine::ops
