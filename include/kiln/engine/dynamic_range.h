#pragma once
// The dynamic range of a tensor (TensorRT's ITensor::setDynamicRange): the interval its values are expected
// in, which an INT8 tactic maps onto the quantized type. Calibration (calibration.h) computes it; a user may
// set it.

#include <algorithm>
#include <cmath>

namespace kiln::engine {

/// [min, max] of a tensor's values. Quantization is symmetric: the scale comes from amax() = max(|min|,
/// |max|); a tensor whose min is >= 0 (a ReLU's output) is stored unsigned (u8, 255 steps) rather than signed
/// (s8, 127).
struct DynamicRange {
  float min = 0.0f;
  float max = 0.0f;

  float amax() const { return std::max(std::fabs(min), std::fabs(max)); }
  bool non_negative() const { return min >= 0.0f; }
  /// Whether the range can quantize anything: finite, min <= max, and a step (scale()) that is a normal
  /// float, so that 1 / scale() is finite (a forged plan's range of 1e-40 would otherwise divide by zero).
  bool usable() const {
    return std::isfinite(min) && std::isfinite(max) && min <= max && std::isnormal(scale()) &&
           std::isfinite(1.0f / scale());
  }
  /// The real value of one quantization step: amax / 255 (unsigned) or amax / 127 (signed).
  float scale() const { return amax() / (non_negative() ? 255.0f : 127.0f); }
  /// The step of a signed INT8 code whatever the range's sign: amax / 127 (where INT8 tensors are always s8:
  /// the cuda backend, Backend::int8_unsigned).
  float symmetric_scale() const { return amax() / 127.0f; }
  bool operator==(const DynamicRange&) const = default;
};

}  // namespace kiln::engine
