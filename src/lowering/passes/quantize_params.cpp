#include "lowering/passes/quantize_params.h"

#include <cmath>
#include <string>

#include "../rewrite.h"
#include "kiln/support/error.h"

namespace kiln::lowering::detail {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The value of a scalar-or-tensor argument: a number, or a one-element constant with data (nullopt when the
// tensor is computed at run time). `count` > 1 reads a per-channel constant of that many elements.
std::optional<std::vector<double>> numbers(const ir::Node& n, const std::string& name) {
  const ir::Argument* a = n.find_arg(name);
  KILN_CHECK(a != nullptr && !a->is_none(), InvalidInput, n.name(), " (", n.target().to_string(), "): no '",
             name, "' argument");
  if (a->kind() == ir::Argument::Kind::Int) return std::vector<double>{static_cast<double>(a->as_int())};
  if (a->kind() == ir::Argument::Kind::Float) return std::vector<double>{a->as_float()};
  if (a->kind() != ir::Argument::Kind::Tensor) return std::nullopt;
  const ir::Value* v = a->as_tensor();
  if (v->role() != ir::ValueRole::Constant || !v->data().defined()) return std::nullopt;
  std::vector<double> out(static_cast<size_t>(v->data().numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = v->data().get_as_double(static_cast<int64_t>(i));
  return out;
}

std::optional<std::pair<int64_t, int64_t>> dtype_bounds(DType d) {
  switch (d) {
    case DType::Int8: return std::make_pair<int64_t, int64_t>(-128, 127);
    case DType::UInt8: return std::make_pair<int64_t, int64_t>(0, 255);
    case DType::Int16: return std::make_pair<int64_t, int64_t>(-32768, 32767);
    case DType::Int32: return std::make_pair<int64_t, int64_t>(INT32_MIN, INT32_MAX);
    default: return std::nullopt;
  }
}

}  // namespace

QuantOpKind quant_op_kind(const ir::Node& node) {
  const std::string t = node.target().to_string();
  if (starts_with(t, "quantized_decomposed.quantize_per_")) return QuantOpKind::Quantize;
  if (starts_with(t, "quantized_decomposed.dequantize_per_")) return QuantOpKind::Dequantize;
  if (starts_with(t, "aten.fake_quantize_per_") || starts_with(t, "aten._fake_quantize_per_"))
    return QuantOpKind::FakeQuantize;
  return QuantOpKind::None;
}

std::optional<QuantParams> read_quant_params(const ir::Node& n) {
  const QuantOpKind kind = quant_op_kind(n);
  KILN_CHECK(kind != QuantOpKind::None, Internal, n.name(), " is not a quantization op");
  const std::string where = n.name() + " (" + n.target().to_string() + ")";
  const bool fake = kind == QuantOpKind::FakeQuantize;
  const bool per_channel = n.target().name.find("per_channel") != std::string::npos;
  const std::string scale_name = fake || !per_channel ? "scale" : "scales";
  const std::string zp_name = fake || !per_channel ? "zero_point" : "zero_points";
  ir::Value* input = tensor_arg(n, fake ? "self" : "input");
  KILN_CHECK(input != nullptr, InvalidInput, where, ": no input tensor");

  QuantParams p;
  std::optional<std::vector<double>> scales = numbers(n, scale_name);
  std::optional<std::vector<double>> zps;
  if (n.find_arg(zp_name) == nullptr || n.arg(zp_name).is_none()) {
    zps = std::vector<double>{0.0};  // dequantize_per_channel's optional zero points
  } else {
    zps = numbers(n, zp_name);
  }
  std::optional<std::vector<double>> qmin = numbers(n, "quant_min"), qmax = numbers(n, "quant_max");
  if (n.has_arg("fake_quant_enabled")) {
    std::optional<std::vector<double>> enabled = numbers(n, "fake_quant_enabled");
    if (!enabled || enabled->size() != 1) return std::nullopt;
    p.disabled = (*enabled)[0] == 0.0;
  }
  if (!scales || !zps || !qmin || !qmax) return std::nullopt;
  KILN_CHECK(qmin->size() == 1 && qmax->size() == 1, InvalidInput, where,
             ": quant_min and quant_max must be scalars");
  p.quant_min = static_cast<int64_t>((*qmin)[0]);
  p.quant_max = static_cast<int64_t>((*qmax)[0]);
  KILN_CHECK(p.quant_min <= p.quant_max, InvalidInput, where, ": quant_min ", p.quant_min, " > quant_max ",
             p.quant_max);
  if (!fake) {
    p.dtype = n.arg("dtype").as_scalar_type();
    std::optional<std::pair<int64_t, int64_t>> bounds = dtype_bounds(*p.dtype);
    KILN_CHECK(bounds.has_value(), InvalidInput, where, ": quantized dtype ", dtype_name(*p.dtype),
               " is not int8, uint8, int16 or int32");
    KILN_CHECK(p.quant_min >= bounds->first && p.quant_max <= bounds->second, InvalidInput, where, ": [",
               p.quant_min, ", ", p.quant_max, "] is outside ", dtype_name(*p.dtype), "'s range");
  }
  if (per_channel) {
    const int64_t rank = input->meta().rank();
    int64_t axis = int_arg(n, "axis", 0);
    KILN_CHECK(axis >= -rank && axis < rank, InvalidInput, where, ": axis ", axis, " out of range for rank ",
               rank);
    p.axis = axis < 0 ? axis + rank : axis;
    const std::optional<int64_t> extent = input->meta().sizes[static_cast<size_t>(p.axis)].as_int();
    KILN_CHECK(extent.has_value(), InvalidInput, where, ": the quantized axis ", p.axis,
               " has a dynamic size");
    KILN_CHECK(static_cast<int64_t>(scales->size()) == *extent, InvalidInput, where, ": ", scales->size(),
               " scales for axis ", p.axis, " of size ", *extent);
    if (zps->size() == 1 && *extent != 1 && !n.has_arg(zp_name))
      zps->assign(static_cast<size_t>(*extent), 0.0);
    KILN_CHECK(static_cast<int64_t>(zps->size()) == *extent, InvalidInput, where, ": ", zps->size(),
               " zero points for axis ", p.axis, " of size ", *extent);
  } else {
    KILN_CHECK(scales->size() == 1 && zps->size() == 1, InvalidInput, where,
               ": a per-tensor scale and zero point ", "must have one element (", scales->size(), " and ",
               zps->size(), ")");
  }
  for (double s : *scales) {
    KILN_CHECK(std::isfinite(s) && s > 0.0 && std::isnormal(static_cast<float>(s)) &&
                   std::isfinite(1.0f / static_cast<float>(s)),
               InvalidInput, where, ": scale ", s, " is not a finite positive number");
  }
  for (double z : *zps) {
    KILN_CHECK(std::isfinite(z) && z == std::nearbyint(z), InvalidInput, where, ": zero point ", z,
               " is not an integer");
    KILN_CHECK(z >= static_cast<double>(p.quant_min) && z <= static_cast<double>(p.quant_max), InvalidInput,
               where, ": zero point ", z, " is outside [", p.quant_min, ", ", p.quant_max, "]");
    p.zero_points.push_back(static_cast<int64_t>(z));
  }
  p.scales = std::move(*scales);
  return p;
}

float quantize_value(float x, double scale, int64_t zero_point, int64_t quant_min, int64_t quant_max) {
  const float inv = static_cast<float>(1.0 / scale);
  const float q = std::nearbyint(x * inv) + static_cast<float>(zero_point);
  return std::fmin(std::fmax(q, static_cast<float>(quant_min)), static_cast<float>(quant_max));
}

float dequantize_value(double q, double scale, int64_t zero_point) {
  return static_cast<float>(q - static_cast<double>(zero_point)) * static_cast<float>(scale);
}

}  // namespace kiln::lowering::detail
