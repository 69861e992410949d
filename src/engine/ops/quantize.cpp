// Symmetric INT8 quantization math (quantize.h).

#include "engine/ops/quantize.h"

#include <algorithm>
#include <cmath>

#include "kiln/support/error.h"

namespace kiln::engine::ops {

int32_t quantize_value(float x, float scale, int32_t lo, int32_t hi) {
  const float q = std::round(x / scale);
  if (!(q >= static_cast<float>(lo))) return lo;  // (NaN goes low)
  return q > static_cast<float>(hi) ? hi : static_cast<int32_t>(q);
}

QuantizedWeights quantize_per_channel(const std::vector<float>& weights, int64_t outer, int64_t channels,
                                      int64_t inner) {
  KILN_CHECK(outer > 0 && channels > 0 && inner > 0 &&
                 static_cast<int64_t>(weights.size()) == outer * channels * inner,
             Internal, "quantize_per_channel: ", weights.size(), " weights are not ", outer, " x ", channels,
             " x ", inner);
  QuantizedWeights q;
  std::vector<float> amax(static_cast<size_t>(channels), 0.0f);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* w = weights.data() + (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) amax[c] = std::max(amax[c], std::fabs(w[i]));
    }
  }
  q.scales.resize(amax.size());
  for (size_t c = 0; c < amax.size(); ++c) q.scales[c] = amax[c] > 0.0f ? amax[c] / 127.0f : 1.0f;
  q.values.resize(weights.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        q.values[base + i] = static_cast<int8_t>(quantize_value(weights[base + i], q.scales[c], -127, 127));
      }
    }
  }
  return q;
}

}  // namespace kiln::engine::ops
