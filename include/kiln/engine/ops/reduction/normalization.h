#pragma once
// Normalization layers: layer, group and instance norm.

#include "kiln/engine/ops/params.h"

namespace kiln::engine {

/// Layer norm normalizes dims [axis, rank); group norm splits dim 1 into `groups` and normalizes each
/// group with the spatial dims; instance norm is group norm with groups == channels.
/// Weights: [scale or undefined, bias or undefined]; layer: shape of dims [axis, rank); group/instance: [C].
struct NormalizationParams {
  enum Kind : uint8_t { Layer, Group, Instance } kind = Layer;
  int64_t axis = -1;
  int64_t groups = 1;
  double epsilon = 1e-5;
  KILN_VISIT_FIELDS(v("kind", kind); v("axis", axis); v("groups", groups); v("epsilon", epsilon))
};

}  // namespace kiln::engine
