#pragma once
// The quantization parameters of a quantize / dequantize / fake-quantize node (PT2E's quantized_decomposed.*
// and aten.fake_quantize_*), read from its arguments and checked, and the exact arithmetic torch applies with
// them. Internal to the lowering passes (lower_quantize_dequantize.cpp).

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::lowering::detail {

/// Scales and zero points, one per tensor (axis < 0) or one per slice along `axis`.
struct QuantParams {
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
  int64_t axis = -1;
  int64_t quant_min = 0;
  int64_t quant_max = 0;
  /// The integer type of the quantized tensor (quantized_decomposed ops); nullopt for fake quantization.
  std::optional<DType> dtype;
  /// Fake quantization switched off (the cachemask op's fake_quant_enabled = 0): the node is the identity.
  bool disabled = false;

  bool per_channel() const { return axis >= 0; }
  bool operator==(const QuantParams&) const = default;
};

/// Which op family a node belongs to.
enum class QuantOpKind { None, Quantize, Dequantize, FakeQuantize };
QuantOpKind quant_op_kind(const ir::Node& node);

/// The node's parameters when every one is known at compile time (scalars, or constants with data); nullopt
/// when some are computed at run time (dynamic quantization). Throws kiln::Error(InvalidInput), one line
/// naming the node, for parameters no quantization can use: a scale that is not a finite positive number,
/// quant_min > quant_max, bounds outside the quantized dtype, a zero point outside [quant_min, quant_max],
/// per-channel scales or zero points whose count is not the size of the axis, an axis out of range.
std::optional<QuantParams> read_quant_params(const ir::Node& node);

/// torch's quantization of one value: clamp(round_half_even(x * inv_scale) + zero_point, quant_min,
/// quant_max), in fp32 as torch computes it (inv_scale = float(1 / scale)).
float quantize_value(float x, double scale, int64_t zero_point, int64_t quant_min, int64_t quant_max);
/// torch's dequantization of one quantized value: float(q - zero_point) * float(scale) (one rounding).
float dequantize_value(double q, double scale, int64_t zero_point);

}  // namespace kiln::lowering::detail
