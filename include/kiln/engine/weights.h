#pragma once
// Weights: a host tensor with the name a Refitter uses to replace it (e.g. "layer1.0.conv1.weight").

#include <string>
#include <vector>

#include "kiln/support/host_tensor.h"

namespace kiln::engine {

/// Named host weights. An undefined `value` marks an empty optional slot (e.g. no bias).
struct Weights {
  std::string name;
  HostTensor value;
  /// The INT8 scales the program stored these weights with, one per output channel (a Q/DQ program's
  /// dequantize of int8 weights: value = q x scale). The INT8 kernels quantize with them when they reproduce
  /// the weights exactly (each value an integer in [-128, 127] times its channel's scale), so the integers
  /// are the program's own; otherwise, and when empty, they compute their own (max |w| / 127 per channel;
  /// / 63 on a CPU without VNNI, docs/quantization.md).
  std::vector<float> int8_scales;

  Weights() = default;
  Weights(std::string weight_name, HostTensor tensor) : name(std::move(weight_name)), value(std::move(tensor)) {}
  /// Unnamed weights (not refittable by name).
  Weights(HostTensor tensor) : value(std::move(tensor)) {}  // NOLINT: implicit on purpose
  bool defined() const { return value.defined(); }
};

}  // namespace kiln::engine
