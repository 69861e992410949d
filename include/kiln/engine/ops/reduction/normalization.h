#pragma once
// Normalization layers: layer, RMS, group and instance norm.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Layer norm normalizes dims [axis, rank): (x - mean) / sqrt(var + epsilon); RMS norm the same dims without
/// centring, x / sqrt(mean(x^2) + epsilon) (torch's rms_norm, Llama's RMSNorm); group norm splits dim 1 into
/// `groups` and normalizes each group with the spatial dims; instance norm is group norm with groups ==
/// channels. Weights: [scale or undefined, bias or undefined]; layer / RMS: shape of dims [axis, rank);
/// group/instance: [C].
struct NormalizationParams {
  enum Kind : uint8_t { Layer, Group, Instance, Rms } kind = Layer;
  /// Layer or Rms: the normalized dims are [axis, rank).
  bool over_trailing_dims() const { return kind == Layer || kind == Rms; }
  int64_t axis = -1;
  int64_t groups = 1;
  double epsilon = 1e-5;
  KILN_VISIT_FIELDS(v("kind", kind); v("axis", axis); v("groups", groups); v("epsilon", epsilon))
};

}  // namespace kiln::engine
