#pragma once
// Weights: a host tensor with the name a Refitter uses to replace it (e.g. "layer1.0.conv1.weight").

#include <string>

#include "kiln/support/host_tensor.h"

namespace kiln::engine {

/// Named host weights. An undefined `value` marks an empty optional slot (e.g. no bias).
struct Weights {
  std::string name;
  HostTensor value;

  Weights() = default;
  Weights(std::string weight_name, HostTensor tensor) : name(std::move(weight_name)), value(std::move(tensor)) {}
  /// Unnamed weights (not refittable by name).
  Weights(HostTensor tensor) : value(std::move(tensor)) {}  // NOLINT: implicit on purpose
  bool defined() const { return value.defined(); }
};

}  // namespace kiln::engine
