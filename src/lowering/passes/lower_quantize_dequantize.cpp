// Quantize / dequantize programs (PT2E's quantized_decomposed.* ops, fake quantization) into the forms the
// converters take, keeping torch's arithmetic exactly:
//   1. a dequantize of a constant integer tensor (int8 weights) becomes the fp32 constant (q - zp) * scale,
//      computed on the host (exact: one rounding, as torch's fp32 product);
//   2. a fake quantization of a constant (weights) becomes the constant it computes;
//   3. a quantize followed by a dequantize with the same parameters becomes one
//      aten.fake_quantize_per_{tensor,channel}_affine node on the quantize's input (the converter folds it
//      into a dynamic range or builds its arithmetic); constant .tensor-overload parameters become scalars;
//   4. whatever is left (a quantize whose result is used as integers, a dequantize of a computed integer
//      tensor, parameters computed at run time) becomes elementwise aten ops: clamp(round(x * (1 / scale)) +
//      zp, qmin, qmax) cast to the integer type, and (float(q) - zp) * scale; choose_qparams.tensor (dynamic
//      quantization) becomes torch's affine parameters from the input's extremes.
// Parameters no quantization can use (scale 0, negative or NaN, quant_min > quant_max, per-channel counts
// that do not match the axis) are a one-line error naming the node (quantize_params.h).

#include <cmath>

#include "../decompositions/builder.h"
#include "../rewrite.h"
#include "kiln/ir/int8_weight_scales.h"
#include "kiln/lowering/passes.h"
#include "kiln/support/error.h"
#include "lowering/passes/quantize_params.h"

namespace kiln::lowering {
namespace {

using detail::QuantOpKind;
using detail::QuantParams;

bool constant_with_data(const ir::Value* v) {
  return v != nullptr && v->role() == ir::ValueRole::Constant && v->data().defined();
}

ir::Value* input_of(const ir::Node& n) {
  return detail::tensor_arg(n, detail::quant_op_kind(n) == QuantOpKind::FakeQuantize ? "self" : "input");
}

// replace_node, then erases the constants (weights, scales, zero points) only `n` read.
void replace(ir::Graph& g, ir::Node* n, const std::vector<ir::Value*>& outs) {
  const std::vector<ir::Value*> read = n->inputs();
  detail::replace_node(g, n, outs);
  for (ir::Value* v : read) detail::erase_if_dead_constant(g, v);
}

// Only output 0 is used (a cachemask op's mask is not).
bool mask_unused(const ir::Graph& g, const ir::Node& n) {
  for (size_t i = 1; i < n.outputs().size(); ++i) {
    if (g.is_output(n.output(i)) || !g.users(n.output(i)).empty()) return false;
  }
  return true;
}

// The index along p.axis of flat element i of a tensor of `sizes` (0 for per-tensor parameters).
struct ChannelOf {
  int64_t inner = 1, extent = 1;
  ChannelOf(const QuantParams& p, const std::vector<int64_t>& sizes) {
    if (!p.per_channel()) return;
    extent = sizes[static_cast<size_t>(p.axis)];
    for (size_t d = static_cast<size_t>(p.axis) + 1; d < sizes.size(); ++d) inner *= sizes[d];
  }
  size_t operator()(int64_t i) const { return static_cast<size_t>((i / inner) % extent); }
};

// Int8 weights the program stored (a dequantize of int8 values) or fake-quantized within int8's bounds
// (ModelOpt-style) with symmetric scales per output channel (dim 0): the readers of the folded constant carry
// the scales, so the INT8 kernels quantize with them (ir/int8_weight_scales.h).
void record_int8_scales(ir::Graph& g, ir::Value* folded, QuantOpKind kind, const QuantParams& p) {
  const bool int8 =
      kind == QuantOpKind::Dequantize ? p.dtype == DType::Int8 : kind == QuantOpKind::FakeQuantize;
  if (!int8 || p.disabled || p.quant_min < -128 || p.quant_max > 127) return;
  if (folded->meta().rank() < 2 || (p.per_channel() && p.axis != 0)) return;
  for (int64_t z : p.zero_points) {
    if (z != 0) return;
  }
  const int64_t channels = folded->data().sizes()[0];
  std::vector<float> scales;
  for (int64_t c = 0; c < channels; ++c)
    scales.push_back(static_cast<float>(p.scales[p.per_channel() ? static_cast<size_t>(c) : 0]));
  const std::string text = ir::format_int8_weight_scales(scales);
  for (ir::Node* user : g.users(folded))
    user->mutable_metadata()[ir::kInt8WeightScalesKeyPrefix + folded->fqn()] = text;
}

// 1 and 2: a dequantize or fake quantization of a constant, computed on the host.
bool fold_constant(ir::Graph& g, ir::Node* n, const QuantParams& p) {
  ir::Value* in = input_of(*n);
  if (!constant_with_data(in) || !mask_unused(g, *n)) return false;
  const QuantOpKind kind = detail::quant_op_kind(*n);
  const HostTensor& x = in->data();
  if (kind == QuantOpKind::Dequantize && !is_integral(x.dtype())) return false;
  if (kind == QuantOpKind::FakeQuantize && !is_floating(x.dtype())) return false;
  const DType out = n->output(0)->meta().dtype;
  HostTensor y(out, x.sizes());
  const ChannelOf channel(p, x.sizes());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const size_t c = channel(i);
    const double s = p.scales[c];
    const int64_t zp = p.zero_points[c];
    double v = x.get_as_double(i);
    if (kind == QuantOpKind::FakeQuantize && !p.disabled) {
      v = detail::dequantize_value(
          detail::quantize_value(static_cast<float>(v), s, zp, p.quant_min, p.quant_max), s, zp);
    } else if (kind == QuantOpKind::Dequantize) {
      v = detail::dequantize_value(v, s, zp);
    }
    y.set_from_double(i, v);
  }
  ir::Value* folded = detail::tensor_constant(g, std::move(y), n->output(0)->name() + "_folded");
  replace(g, n, {folded});
  record_int8_scales(g, folded, kind, p);
  return true;
}

// A float32 constant of the per-channel values broadcast against a tensor of `rank` (shape 1 except `axis`).
ir::Value* channel_constant(ir::Graph& g, const std::vector<double>& values, int64_t axis, int64_t rank,
                            DType dtype, const std::string& base) {
  std::vector<int64_t> sizes(static_cast<size_t>(rank), 1);
  sizes[static_cast<size_t>(axis)] = static_cast<int64_t>(values.size());
  HostTensor t(dtype, sizes);
  for (size_t i = 0; i < values.size(); ++i) t.set_from_double(static_cast<int64_t>(i), values[i]);
  return detail::tensor_constant(g, std::move(t), base);
}

// 3: the fake quantization equal to quantize -> dequantize with `p` on x (its output meta `meta`).
ir::Value* emit_fake_quantize(ir::Graph& g, ir::Node* before, ir::Value* x, const QuantParams& p,
                              const ir::TensorMeta& meta, const std::string& base) {
  using detail::named;
  using ir::Argument;
  if (!p.per_channel()) {
    return detail::emit(
        g, before, "aten.fake_quantize_per_tensor_affine.default",
        {named("self", Argument::tensor(x)), named("scale", Argument::float_(p.scales[0])),
         named("zero_point", Argument::int_(p.zero_points[0])),
         named("quant_min", Argument::int_(p.quant_min)), named("quant_max", Argument::int_(p.quant_max))},
        meta, base);
  }
  const int64_t c = static_cast<int64_t>(p.scales.size());
  HostTensor scale(DType::Float32, {c}), zp(DType::Int32, {c});
  for (int64_t i = 0; i < c; ++i) {
    scale.set_from_double(i, p.scales[static_cast<size_t>(i)]);
    zp.set_from_double(i, static_cast<double>(p.zero_points[static_cast<size_t>(i)]));
  }
  return detail::emit(
      g, before, "aten.fake_quantize_per_channel_affine.default",
      {named("self", Argument::tensor(x)),
       named("scale", Argument::tensor(detail::tensor_constant(g, std::move(scale), base + "_scale"))),
       named("zero_point", Argument::tensor(detail::tensor_constant(g, std::move(zp), base + "_zero_point"))),
       named("axis", Argument::int_(p.axis)), named("quant_min", Argument::int_(p.quant_min)),
       named("quant_max", Argument::int_(p.quant_max))},
      meta, base);
}

// Equal parameters, the dequantize's integer type included.
bool same_params(const QuantParams& q, const QuantParams& dq) { return q == dq; }

bool fold_pair(ir::Graph& g, ir::Node* dq, const QuantParams& p) {
  ir::Value* q_out = input_of(*dq);
  ir::Node* q = q_out == nullptr ? nullptr : q_out->producer();
  if (q == nullptr || detail::quant_op_kind(*q) != QuantOpKind::Quantize) return false;
  if (dq->output(0)->meta().dtype != DType::Float32) return false;
  std::optional<QuantParams> qp = detail::read_quant_params(*q);
  if (!qp || !same_params(*qp, p)) return false;
  ir::Value* x = input_of(*q);
  if (x->meta().dtype != DType::Float32) return false;
  ir::Value* fq = emit_fake_quantize(g, dq, x, p, dq->output(0)->meta(), dq->output(0)->name());
  replace(g, dq, {fq});
  if (!g.is_output(q_out) && g.users(q_out).empty()) {
    const std::vector<ir::Value*> read = q->inputs();
    g.erase_node(q);
    for (ir::Value* v : read) detail::erase_if_dead_constant(g, v);
  }
  return true;
}

// A fake quantization whose parameters were tensors (constants) or whose mask is unused: the plain scalar
// form; a disabled one: the identity.
bool canonicalize_fake_quantize(ir::Graph& g, ir::Node* n, const QuantParams& p) {
  if (!mask_unused(g, *n)) return false;
  if (p.disabled) {
    replace(g, n, {input_of(*n)});
    return true;
  }
  const std::string target = n->target().to_string();
  if (target == "aten.fake_quantize_per_tensor_affine.default" ||
      target == "aten.fake_quantize_per_channel_affine.default") {
    return false;
  }
  ir::Value* fq = emit_fake_quantize(g, n, input_of(*n), p, n->output(0)->meta(), n->output(0)->name());
  std::vector<ir::Value*> outs(n->outputs().size(), nullptr);
  outs[0] = fq;
  replace(g, n, outs);
  return true;
}

// 4: elementwise arithmetic. Scale and zero point: scalars, per-channel constants, or run-time tensors.
struct Operands {
  ir::Value* inv_scale = nullptr;  // tensors; null when scalars are used
  ir::Value* scale = nullptr;
  ir::Value* zero_point = nullptr;
  const QuantParams* p = nullptr;  // scalars (per tensor) when set and not per channel
};

ir::Value* quantize_arithmetic(detail::Builder& b, ir::Value* x, const Operands& o, int64_t qmin,
                               int64_t qmax) {
  if (x->meta().dtype != DType::Float32) {
    x = detail::emit(b.graph(), b.before(), "aten._to_copy.default", detail::to_copy_args(x, DType::Float32),
                     detail::with_dtype(x->meta(), DType::Float32), x->name() + "_f32");
  }
  ir::Value* scaled = o.inv_scale != nullptr ? b.mul(x, o.inv_scale)
                                             : b.mul_scalar(x, static_cast<float>(1.0 / o.p->scales[0]));
  ir::Value* r = b.unary("aten.round.default", scaled);
  r = o.zero_point != nullptr ? b.add(r, o.zero_point)
                              : b.add_scalar(r, static_cast<double>(o.p->zero_points[0]));
  return b.clamp(r, static_cast<double>(qmin), static_cast<double>(qmax));
}

ir::Value* dequantize_arithmetic(detail::Builder& b, ir::Value* q, const Operands& o) {
  ir::Value* d = o.zero_point != nullptr ? b.sub(q, o.zero_point)
                                         : b.add_scalar(q, -static_cast<double>(o.p->zero_points[0]));
  return o.scale != nullptr ? b.mul(d, o.scale) : b.mul_scalar(d, static_cast<float>(o.p->scales[0]));
}

ir::Value* cast(detail::Builder& b, ir::Value* v, DType dtype) {
  if (v->meta().dtype == dtype) return v;
  return detail::emit(b.graph(), b.before(), "aten._to_copy.default", detail::to_copy_args(v, dtype),
                      detail::with_dtype(v->meta(), dtype), v->name() + "_cast");
}

bool decompose(ir::Graph& g, ir::Node* n, const std::optional<QuantParams>& p) {
  if (!mask_unused(g, *n)) return false;
  const QuantOpKind kind = detail::quant_op_kind(*n);
  const bool fake = kind == QuantOpKind::FakeQuantize;
  ir::Value* x = input_of(*n);
  detail::Builder b(g, n);
  Operands o;
  int64_t qmin = 0, qmax = 0;
  if (p) {
    if (p->disabled) return false;  // (canonicalize_fake_quantize handles it)
    qmin = p->quant_min;
    qmax = p->quant_max;
    o.p = &*p;
    if (p->per_channel()) {
      std::vector<double> inv, zp;
      for (double s : p->scales) inv.push_back(static_cast<float>(1.0f / static_cast<float>(s)));
      for (int64_t z : p->zero_points) zp.push_back(static_cast<double>(z));
      const int64_t rank = x->meta().rank();
      const std::string base = n->output(0)->name();
      o.inv_scale = channel_constant(g, inv, p->axis, rank, DType::Float32, base + "_inv_scale");
      o.scale = channel_constant(g, p->scales, p->axis, rank, DType::Float32, base + "_scale");
      o.zero_point = channel_constant(g, zp, p->axis, rank, DType::Float32, base + "_zero_point");
    }
  } else {
    // Parameters computed at run time: per-tensor scale and zero point tensors, constant bounds.
    const std::string& name = n->target().name;
    if (name.find("per_channel") != std::string::npos || n->has_arg("fake_quant_enabled")) return false;
    const ir::Argument* lo = n->find_arg("quant_min");
    const ir::Argument* hi = n->find_arg("quant_max");
    if (lo == nullptr || hi == nullptr || lo->kind() != ir::Argument::Kind::Int ||
        hi->kind() != ir::Argument::Kind::Int) {
      return false;
    }
    qmin = lo->as_int();
    qmax = hi->as_int();
    ir::Value* scale = detail::tensor_arg(*n, "scale");
    ir::Value* zero_point = detail::tensor_arg(*n, "zero_point");
    if (scale == nullptr || zero_point == nullptr) return false;
    o.scale = cast(b, scale, DType::Float32);
    o.zero_point = cast(b, zero_point, DType::Float32);
    o.inv_scale = b.unary("aten.reciprocal.default", o.scale);
  }
  ir::Value* out = nullptr;
  if (kind == QuantOpKind::Quantize) {
    out = cast(b, quantize_arithmetic(b, x, o, qmin, qmax), n->output(0)->meta().dtype);
  } else if (kind == QuantOpKind::Dequantize) {
    out = cast(b, dequantize_arithmetic(b, cast(b, x, DType::Float32), o), n->output(0)->meta().dtype);
  } else if (fake) {
    out = cast(b, dequantize_arithmetic(b, quantize_arithmetic(b, x, o, qmin, qmax), o),
               n->output(0)->meta().dtype);
  }
  if (out == nullptr || out->meta().sizes != n->output(0)->meta().sizes) return false;
  std::vector<ir::Value*> outs(n->outputs().size(), nullptr);
  outs[0] = out;
  replace(g, n, outs);
  return true;
}

// choose_qparams.tensor(input, quant_min, quant_max, eps, dtype) (dynamic quantization): torch's affine
// parameters from the input's extremes, in fp32 as torch computes them: lo = min(min(x), 0), hi = max(max(x),
// 0), scale = max((hi - lo) / (quant_max - quant_min), eps), zero_point = clamp(quant_min - round(lo /
// scale), quant_min, quant_max); then cast to the outputs' types and shapes.
bool decompose_choose_qparams(ir::Graph& g, ir::Node* n) {
  ir::Value* x = detail::tensor_arg(*n, "input");
  const ir::Argument* lo_arg = n->find_arg("quant_min");
  const ir::Argument* hi_arg = n->find_arg("quant_max");
  if (x == nullptr || x->meta().dtype != DType::Float32 || n->outputs().size() != 2 || lo_arg == nullptr ||
      hi_arg == nullptr || lo_arg->kind() != ir::Argument::Kind::Int ||
      hi_arg->kind() != ir::Argument::Kind::Int) {
    return false;
  }
  const int64_t qmin = lo_arg->as_int(), qmax = hi_arg->as_int();
  KILN_CHECK(qmin < qmax, InvalidInput, n->name(), " (", n->target().to_string(), "): quant_min ", qmin,
             " >= quant_max ", qmax);
  const double eps = detail::float_arg(*n, "eps", 1.1920928955078125e-07);
  detail::Builder b(g, n);
  auto extreme = [&](const char* target) {
    std::vector<int64_t> all;
    for (int64_t d = 0; d < x->meta().rank(); ++d) all.push_back(d);
    return b.op(
        target,
        {detail::named("self", ir::Argument::tensor(x)), detail::named("dim", ir::Argument::ints(all)),
         detail::named("keepdim", ir::Argument::bool_(false))},
        detail::with_sizes(x->meta(), {}), "");
  };
  ir::Value* lo = b.clamp(extreme("aten.amin.default"), std::nullopt, 0.0);
  ir::Value* hi = b.clamp(extreme("aten.amax.default"), 0.0, std::nullopt);
  ir::Value* scale = b.clamp(b.div_scalar(b.sub(hi, lo), static_cast<double>(qmax - qmin)),
                             static_cast<double>(static_cast<float>(eps)), std::nullopt);
  ir::Value* zero_point =
      b.clamp(b.add_scalar(b.mul_scalar(b.unary("aten.round.default", b.div(lo, scale)), -1.0),
                           static_cast<double>(qmin)),
              static_cast<double>(qmin), static_cast<double>(qmax));
  std::vector<ir::Value*> outs;
  for (auto [v, out] : {std::pair{scale, n->output(0)}, std::pair{zero_point, n->output(1)}}) {
    if (!out->meta().sizes.empty()) {
      std::vector<int64_t> shape;
      for (const ir::SymExpr& s : out->meta().sizes) {
        if (!s.as_int()) return false;
        shape.push_back(*s.as_int());
      }
      int64_t numel = 1;
      for (int64_t d : shape) numel *= d;
      if (numel != 1) return false;
      v = detail::emit(
          g, n, "aten.reshape.default",
          {detail::named("self", ir::Argument::tensor(v)), detail::named("shape", ir::Argument::ints(shape))},
          detail::with_sizes(v->meta(), out->meta().sizes), v->name() + "_shaped");
    }
    outs.push_back(cast(b, v, out->meta().dtype));
  }
  replace(g, n, outs);
  return true;
}

bool run_lower_qdq(ir::Graph& g, const PassContext&) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    if (detail::is_op(*n, "quantized_decomposed.choose_qparams.tensor"))
      changed |= decompose_choose_qparams(g, n);
  }
  // Constants and pairs first, so that no quantize is decomposed while a dequantize still pairs with it.
  for (ir::Node* n : g.nodes()) {
    const QuantOpKind kind = detail::quant_op_kind(*n);
    if (kind == QuantOpKind::None || kind == QuantOpKind::Quantize) continue;
    std::optional<QuantParams> p = detail::read_quant_params(*n);
    if (!p) continue;
    if (fold_constant(g, n, *p)) {
      changed = true;
    } else if (kind == QuantOpKind::Dequantize) {
      changed |= fold_pair(g, n, *p);
    } else {
      changed |= canonicalize_fake_quantize(g, n, *p);
    }
  }
  for (ir::Node* n : g.nodes()) {
    const QuantOpKind kind = detail::quant_op_kind(*n);
    if (kind == QuantOpKind::None) continue;
    std::optional<QuantParams> p = detail::read_quant_params(*n);
    // (the converters take fake quantization with known parameters)
    if (kind == QuantOpKind::FakeQuantize && p) continue;
    changed |= decompose(g, n, p);
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_lower_quantize_dequantize_pass() {
  return std::make_shared<FunctionPass>(
      "lower_quantize_dequantize",
      "Folds dequantized constant weights, pairs quantize/dequantize into fake_quantize_per_*_affine, and "
      "rewrites the other quantize/dequantize nodes into elementwise ops (torch's arithmetic).",
      run_lower_qdq);
}

}  // namespace kiln::lowering
