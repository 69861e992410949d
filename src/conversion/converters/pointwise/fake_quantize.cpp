// Fake quantization (aten.fake_quantize_per_tensor_affine / _per_channel_affine; lowering also turns PT2E's
// quantize -> dequantize pairs into these, lower_quantize_dequantize.cpp). TensorRT's explicit quantization:
//
// - folded: with INT8 among the precisions, a symmetric per-tensor fake quantization of an fp32 tensor (zero
//   point 0; [-128, 127] or [-127, 127] as int8, or [0, 255] as uint8) becomes that tensor's dynamic range,
//   amax = scale x quant_max ([0, amax] for [0, 255]), so the INT8 kernels quantize it with the program's
//   scale; no layer is added. A layer that reads it in fp32 sees the unrounded value (the rounding is the
//   INT8 kernel's).
// - otherwise the exact arithmetic, in fp32 elementwise layers: q = clamp(round_half_even(x * (1 / scale)) +
//   zp, quant_min, quant_max), then (q - zp) * scale; per channel with [1, .., C, .., 1] constants.
// Each node's choice and its reason go to ConversionContext::quantization_notes (the compile report).

#include <cmath>
#include <sstream>

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/pointwise.h"
#include "kiln/engine/backend.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using engine::ElementwiseOp;
using impl::Operand;

struct FakeQuant {
  std::vector<double> scales;
  std::vector<double> zero_points;
  int64_t axis = -1;  // per tensor
  int64_t quant_min = 0, quant_max = 0;
};

std::vector<double> constant_values(const ConversionContext& ctx, const ConverterArgs& a, const char* name) {
  const ir::Argument* arg = a.raw(name);
  KILN_CHECK(arg != nullptr && arg->kind() == ir::Argument::Kind::Tensor &&
                 arg->as_tensor()->role() == ir::ValueRole::Constant && arg->as_tensor()->data().defined(),
             Unsupported, ctx.current_node, ": per-channel fake quantization needs a constant ", name);
  const HostTensor& t = arg->as_tensor()->data();
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = t.get_as_double(static_cast<int64_t>(i));
  return out;
}

FakeQuant read(const ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a, int64_t rank) {
  FakeQuant q;
  q.quant_min = a.int_("quant_min");
  q.quant_max = a.int_("quant_max");
  if (n.target().name == "fake_quantize_per_channel_affine") {
    q.scales = constant_values(ctx, a, "scale");
    q.zero_points = constant_values(ctx, a, "zero_point");
    q.axis = a.int_("axis");
    if (q.axis < 0) q.axis += rank;
    KILN_CHECK(q.axis >= 0 && q.axis < rank, InvalidInput, ctx.current_node, ": axis out of range");
    KILN_CHECK(q.scales.size() == q.zero_points.size(), InvalidInput, ctx.current_node, ": ", q.scales.size(),
               " scales and ", q.zero_points.size(), " zero points");
  } else {
    q.scales = {a.float_("scale")};
    q.zero_points = {static_cast<double>(a.int_("zero_point"))};
  }
  KILN_CHECK(q.quant_min <= q.quant_max, InvalidInput, ctx.current_node, ": quant_min ", q.quant_min,
             " > quant_max ", q.quant_max);
  for (double s : q.scales) {
    KILN_CHECK(std::isfinite(s) && s > 0 && std::isnormal(static_cast<float>(s)), InvalidInput,
               ctx.current_node, ": scale ", s, " is not a finite positive number");
  }
  return q;
}

// The range a fold gives (min, max), or why the node cannot fold.
std::string fold_refusal(const ConversionContext& ctx, const engine::Tensor* x, const FakeQuant& q,
                         engine::DynamicRange* range) {
  if (ctx.compilation_settings.enabled_precisions.count(settings::Precision::I8) == 0)
    return "int8 precision not enabled";
  // (docs/quantization.md: only the cpu backend folds Q/DQ pairs, exactly only on CPUs with VNNI; elsewhere a
  // range would be ignored and the engine would compute the unquantized model, not the program)
  if (std::string why; !engine::backend_runs_int8(ctx.compilation_settings.backend, &why)) return why;
  if (q.axis >= 0) return "per-channel on an activation (ranges are per tensor)";
  if (x->dtype() != DType::Float32) return std::string("input is ") + dtype_name(x->dtype()) + ", not f32";
  if (q.zero_points[0] != 0)
    return "zero point " + std::to_string(static_cast<int64_t>(q.zero_points[0])) + " (not symmetric)";
  const bool s8 = (q.quant_min == -128 || q.quant_min == -127) && q.quant_max == 127;
  const bool u8 = q.quant_min == 0 && q.quant_max == 255;
  if (!s8 && !u8) {
    return "bounds [" + std::to_string(q.quant_min) + ", " + std::to_string(q.quant_max) +
           "] (INT8 kernels take [-128, 127], [-127, 127] or [0, 255])";
  }
  const float amax = static_cast<float>(q.scales[0] * static_cast<double>(q.quant_max));
  *range = engine::DynamicRange{u8 ? 0.0f : -amax, amax};
  if (!range->usable()) return "scale too small or too large for an INT8 range";
  if (x->dynamic_range() && !(*x->dynamic_range() == *range)) return "tensor already has another Q/DQ range";
  return "";
}

// [1, .., C at axis, .., 1] fp32 constant.
engine::Tensor* per_channel(ConversionContext& ctx, const std::vector<double>& values, int64_t axis,
                            int64_t rank) {
  std::vector<int64_t> sizes(static_cast<size_t>(rank), 1);
  sizes[static_cast<size_t>(axis)] = static_cast<int64_t>(values.size());
  HostTensor t(DType::Float32, sizes);
  for (size_t i = 0; i < values.size(); ++i) t.set_from_double(static_cast<int64_t>(i), values[i]);
  return impl::constant(ctx, t);
}

engine::Tensor* arithmetic(ConversionContext& ctx, engine::Tensor* x, const FakeQuant& q) {
  const DType f = DType::Float32;
  x = impl::cast(ctx, x, f);
  Operand inv, scale, zp;
  if (q.axis < 0) {
    // torch: x * float(1 / scale) (quantized_decomposed; ATen's fake quantization takes 1.0f / float(scale),
    // the same float except for a double-rounding tie, about one scale in 2^29)
    inv = Operand::of(static_cast<float>(1.0 / q.scales[0]), true);
    scale = Operand::of(static_cast<float>(q.scales[0]), true);
    zp = Operand::of(q.zero_points[0], true);
  } else {
    std::vector<double> inverse;
    for (double s : q.scales) inverse.push_back(1.0f / static_cast<float>(s));  // torch: fp32 1 / scales
    inv = Operand::of(per_channel(ctx, inverse, q.axis, x->rank()));
    scale = Operand::of(per_channel(ctx, q.scales, q.axis, x->rank()));
    zp = Operand::of(per_channel(ctx, q.zero_points, q.axis, x->rank()));
  }
  engine::Tensor* r = impl::unary(ctx, impl::binary(ctx, Operand::of(x), inv, ElementwiseOp::Mul, f),
                                  engine::UnaryOp::Round, false);
  r = impl::binary(ctx, Operand::of(r), zp, ElementwiseOp::Add, f);
  r = impl::clamp(ctx, r, static_cast<double>(q.quant_min), static_cast<double>(q.quant_max));
  r = impl::binary(ctx, Operand::of(r), zp, ElementwiseOp::Sub, f);
  return impl::binary(ctx, Operand::of(r), scale, ElementwiseOp::Mul, f);
}

Outputs fake_quantize(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const FakeQuant q = read(ctx, n, a, x->rank());
  engine::DynamicRange range;
  const std::string why = fold_refusal(ctx, x, q, &range);
  std::ostringstream note;
  note << ctx.current_node << ": ";
  if (why.empty()) {
    x->set_dynamic_range(range.min, range.max);
    note << "folded into the range [" << range.min << ", " << range.max << "] of " << x->name();
    ctx.quantization_notes.push_back(note.str());
    return {x};
  }
  note << "fake-quant arithmetic (" << why << ")";
  ctx.quantization_notes.push_back(note.str());
  return {impl::cast(ctx, arithmetic(ctx, x, q), detail::out_dtype(n))};
}

// Per channel: the scales and zero points must be constants.
bool constant_qparams(const ir::Node& n, const settings::CompilationSettings&) {
  return detail::is_weight_or_none(n, "scale") && detail::is_weight_or_none(n, "zero_point");
}

}  // namespace

void register_fake_quantize_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.fake_quantize_per_tensor_affine.default"}, fake_quantize, true);
  add(r, {"aten.fake_quantize_per_channel_affine.default"}, fake_quantize, true, constant_qparams);
}

}  // namespace kiln::conversion
