// oneDNN INT8 convolution: the "onednn_int8" tactic (Tactic::int8), offered by the builder only to layers its
// INT8 policy allows (engine/core/int8_policy.h).
//
//   input   u8 where its dynamic range is non-negative (after a ReLU), s8 otherwise, one scale per tensor
//           (DynamicRange::scale()). An fp32 input (in whatever format its producer writes) is quantized by a
//           oneDNN reorder into the primitive's channels-last u8/s8 buffer (a signed one on a CPU without
//           VNNI as u8 with zero point 128, signed_input_zero_point); an input the builder left in INT8 (its
//           producer is an INT8 layer too) is read as it is, channels-last.
//   weights s8, symmetric, one scale per output channel (ops::quantize_per_channel), prepared once; 7-bit
//           on a CPU without VNNI (int8_weight_max), where only u8 storage is read (int8_layer_exact);
//           8-bit ones only on a oneDNN implementation that adds them in 32 bits
//           (skip_int8_implementations_not_exact).
//   bias    fp32: oneDNN 2.x adds it to the s32 accumulator before the output scales, so it is stored
//           divided by the input and weight scales.
//   output  fp32, or u8/s8 with its own dynamic range when the builder keeps it in INT8 (then its activations
//           must be ReLU: oneDNN applies post-ops after the output scale, in the quantized domain, where only
//           a scale-invariant activation gives the same result). Output scales per channel: input scale x
//           weight scale / output scale (1 for fp32).
//   residual (Sum post-op: oneDNN adds what the destination holds) of the output's kind (both fp32, or both
//           INT8: channels-last, copied into the destination and read in its own type, the sum's scale
//           multiplied by the residual's step over the output's), or converted into the destination by a
//           reorder first: an INT8 residual dequantized into an fp32 output, an fp32 residual (in its
//           producer's format, with a range) quantized into an INT8 output's buffer in the type of its own
//           range (u8 for a never-negative one, else s8, whatever the output's type: the residual is added
//           before the ReLU).
// Primitives are cached per input shape in the per-context state, each with its own quantized-input buffer.

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "engine/backends/cpu/onednn/conv_geometry.h"
#include "engine/backends/cpu/onednn/onednn_common.h"
#include "engine/backends/cpu/onednn/register.h"
#include "engine/ops/quantize.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::onednn {
namespace {

bool is_int8(DType dtype) { return dtype == DType::Int8 || dtype == DType::UInt8; }

// The INT8 type a tensor with `range` is stored in.
DType int8_dtype(const DynamicRange& range) { return range.non_negative() ? DType::UInt8 : DType::Int8; }

struct Int8Entry : ConvPrimitive {
  using ConvPrimitive::ConvPrimitive;
  dnnl::primitive quantize;  // fp32 input -> quantized input (only for an fp32 input)
  dnnl::primitive residual;  // residual -> the destination's buffer (only for a converted residual)
  memory::desc input_md, residual_md, held_md;
  memory quantized;  // the quantized input (only for an fp32 input)
};

struct Int8State : KernelState {
  std::map<Dims, std::unique_ptr<Int8Entry>> entries;
  dnnl::stream stream{cpu_engine()};
};

bool all_relu(const std::vector<PostOp>& post_ops) {
  return std::all_of(post_ops.begin(), post_ops.end(), [](const PostOp& p) {
    return p.kind == PostOp::Sum || p.activation.kind == ActivationKind::Relu;
  });
}

// Whether tensor `t` is fp32, or INT8 in the type its range gives.
bool valid_storage(const TensorInfo& t) {
  if (t.dtype == DType::Float32) return true;
  return is_int8(t.dtype) && t.range && t.range->usable() && t.dtype == int8_dtype(*t.range);
}

// Whether residual `r` is converted into output `y`'s buffer by a reorder (one of them fp32, the other INT8)
// rather than copied.
bool residual_converted(const TensorInfo& r, const TensorInfo& y) {
  return is_int8(r.dtype) != is_int8(y.dtype);
}

bool int8_conv_applies(const LayerInfo& info, std::string* why = nullptr) {
  const Layer& layer = *info.layer;
  const auto& p = layer.get<ConvolutionParams>();
  if (p.transposed) return refuse(why, "transposed");
  if (layer.weights.empty() || !layer.weights[0].defined() || !is_floating(layer.weights[0].value.dtype())) {
    return refuse(why, "no floating-point kernel weight");
  }
  const int64_t ns = layer.weights[0].value.dim() - 2;
  if (ns < 1 || ns > 3) return refuse(why, std::to_string(ns) + " spatial dims (onednn takes 1 to 3)");
  if (!post_ops_supported(p.post_ops, why)) return false;
  const TensorInfo& x = info.inputs[0];
  const TensorInfo& y = info.outputs[0];
  if (!x.range || !x.range->usable()) return refuse(why, "no usable dynamic range on the input");
  // (An fp32 input with a signed range is stored as the kernel quantizes it: u8 with a zero point without
  // VNNI.)
  const DType stored =
      x.dtype == DType::Float32 && signed_input_zero_point() != 0 ? DType::UInt8 : int8_dtype(*x.range);
  if (!int8_layer_exact(stored, !layer.weights[0].int8_scales.empty(), why)) return false;
  if (!valid_storage(x) || !valid_storage(y)) return refuse(why, "tensors not f32 nor INT8 of their range");
  if (is_int8(y.dtype) && !all_relu(p.post_ops)) return refuse(why, "an INT8 output after post-ops but ReLU");
  if (count_sum_post_ops(p.post_ops) > 0) {
    const TensorInfo& r = info.inputs[static_cast<size_t>(first_residual_input(layer))];
    if (!valid_storage(r) || !same_dims(r, y) || (is_int8(y.dtype) && !r.range)) {
      return refuse(why, "a residual of another storage or dims than the output");
    }
  }
  return true;
}

// Channels-last INT8 tensors (oneDNN's native INT8 layout on x86); an fp32 input is read in the format its
// producer writes (the reorder that quantizes it changes the layout too).
TacticFormats int8_formats(const LayerInfo& info) {
  TacticFormats f;
  f.inputs.assign(info.inputs.size(), TensorFormat::ChannelsLast);
  if (info.inputs[0].dtype == DType::Float32) f.inputs[0] = info.inputs[0].format;
  for (size_t k = 1; k < info.inputs.size(); ++k) {
    if (residual_converted(info.inputs[k], info.outputs[0]) && !is_int8(info.inputs[k].dtype)) {
      f.inputs[k] = info.inputs[k].format;  // quantized by a reorder, which reads any format
    }
  }
  f.outputs = {TensorFormat::ChannelsLast};
  return f;
}

class Int8ConvolutionKernel : public Kernel {
 public:
  explicit Int8ConvolutionKernel(const LayerInfo& info)
      : geo_(*info.layer, false), macs_per_element_(macs_per_element(*info.layer)) {
    const Layer& layer = *info.layer;
    const TensorInfo& x = info.inputs[0];
    const TensorInfo& y = info.outputs[0];
    std::string why;
    KILN_CHECK(int8_conv_applies(info, &why), InvalidInput, "convolution '", layer.name,
               "': the INT8 tactic does not apply here: ", why);
    name_ = layer.name;
    input_dtype_ = x.dtype;
    input_format_ = x.format;
    dst_dtype_ = y.dtype;
    dst_format_ = y.format;
    KILN_CHECK(!is_int8(x.dtype) || x.format == TensorFormat::ChannelsLast, InvalidInput, "convolution '",
               layer.name, "': an INT8 input must be channels-last, got ", tensor_format_name(x.format));
    src_zero_point_ =
        x.dtype == DType::Float32 && !x.range->non_negative() ? signed_input_zero_point() : int32_t{0};
    src_dt_ = src_zero_point_ != 0 ? DT::u8 : dnnl_dtype(int8_dtype(*x.range));
    const float in_scale = x.range->scale();
    input_scale_ = in_scale;
    const float out_scale = is_int8(y.dtype) ? y.range->scale() : 1.0f;

    const std::vector<float> w = weights_as_floats(layer.weights[0].value);
    const auto& ws = layer.weights[0].value.sizes();
    const int64_t channels = ws[0];
    const ops::QuantizedWeights q =
        ops::quantize_per_channel(w, 1, channels, static_cast<int64_t>(w.size()) / channels,
                                  layer.weights[0].int8_scales, int8_weight_max());
    weight_values_ = q.values;
    std::vector<float> output_scales(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) output_scales[c] = in_scale * q.scales[c] / out_scale;
    if (layer.weights.size() > 1 && layer.weights[1].defined()) {
      bias_values_ = weights_as_floats(layer.weights[1].value);
      for (int64_t c = 0; c < channels; ++c) bias_values_[c] /= in_scale * q.scales[c];
    }
    float sum_factor = 1.0f;
    DT sum_dtype = DT::undef;
    if (geo_.residual_input >= 0) {
      const TensorInfo& r = info.inputs[static_cast<size_t>(geo_.residual_input)];
      convert_residual_ = residual_converted(r, y);
      KILN_CHECK(convert_residual_ || r.format == dst_format_, InvalidInput, "convolution '", layer.name,
                 "': residual '", r.name, "' is in format ", tensor_format_name(r.format),
                 " but the output in ", tensor_format_name(dst_format_));
      residual_dtype_ = r.dtype;
      residual_format_ = r.format;
      if (is_int8(y.dtype)) {
        // The destination holds the residual in its own INT8 type, or (an fp32 residual, converted) in the
        // INT8 type of its range, at its step.
        sum_factor = r.range->scale() / out_scale;
        const DT held = dnnl_dtype(convert_residual_ ? int8_dtype(*r.range) : r.dtype);
        if (held != dnnl_dtype(y.dtype)) sum_dtype = held;
        residual_held_ = held;
        residual_scale_ = convert_residual_ ? 1.0f / r.range->scale() : 1.0f;
      } else if (convert_residual_) {
        residual_scale_ = r.range->scale();  // dequantized into the fp32 destination
      }
    }
    geo_.weights_dt = DT::s8;
    geo_.attr = make_attr(geo_.p.post_ops, sum_factor, sum_dtype);
    geo_.attr.set_output_scales(1 << 1, output_scales);  // per output channel (dst dim 1)
    if (src_zero_point_ != 0) geo_.attr.set_zero_points(DNNL_ARG_SRC, 0, {src_zero_point_});

    try {
      auto pd = make_pd(x.opt, y.opt);
      require_optimized(info, pd, "INT8 convolution '" + layer.name + "'");
      prepared_md_ = pd.weights_desc();
      prepared_ = reorder_weights(prepared_md_);
    } catch (const dnnl::error& e) {
      KILN_FAIL(Unsupported, "convolution '", layer.name,
                "': oneDNN has no INT8 primitive for it: ", e.what());
    }
  }

  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<Int8State>(); }

  void execute(KernelArgs& args) const override {
    auto* state = static_cast<Int8State*>(args.state);
    KILN_CHECK(state != nullptr, Internal, "oneDNN INT8 convolution executed without its state");
    const TensorView& x = args.inputs[0];
    const TensorView& y = args.outputs[0];
    KILN_CHECK(x.format == input_format_ && y.format == dst_format_ && x.dtype == input_dtype_ &&
                   y.dtype == dst_dtype_,
               Internal, "oneDNN INT8 convolution got other tensors than it was made for");
    // (Before the primitive is made: see convolution.cpp.)
    use_threads(threads_for_macs(args.pool, static_cast<double>(y.numel()) * macs_per_element_));
    Int8Entry& e = entry_for_shape(state->entries[x.dims], "INT8 convolution",
                                   [&] { return make_entry(x.dims, y.dims); });
    dnnl::stream& s = state->stream;
    try {
      if (geo_.residual_input >= 0) {
        const TensorView& r = args.inputs[geo_.residual_input];
        if (convert_residual_) {
          memory from(e.residual_md, cpu_engine(), r.data), to(e.held_md, cpu_engine(), y.data);
          e.residual.execute(s, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
        } else if (r.data != y.data) {
          std::memcpy(y.data, r.data, y.nbytes());
        }
      }
      memory src = e.quantized;
      if (input_dtype_ == DType::Float32) {
        memory in(e.input_md, cpu_engine(), x.data);
        e.quantize.execute(s, {{DNNL_ARG_FROM, in}, {DNNL_ARG_TO, e.quantized}});
      } else {
        src = memory(e.src_md, cpu_engine(), x.data);
      }
      std::unordered_map<int, memory> margs{{DNNL_ARG_SRC, src},
                                            {DNNL_ARG_WEIGHTS, *e.weights},
                                            {DNNL_ARG_DST, memory(e.dst_md, cpu_engine(), y.data)},
                                            {DNNL_ARG_SCRATCHPAD, e.scratchpad}};
      if (!bias_values_.empty()) {
        margs.emplace(DNNL_ARG_BIAS,
                      memory(geo_.bias_md, cpu_engine(), const_cast<float*>(bias_values_.data())));
      }
      e.conv.execute(s, margs);
      s.wait();
    } catch (const dnnl::error& err) {
      KILN_FAIL(Internal, "oneDNN INT8 convolution (implementation '", e.impl, "', status ",
                static_cast<int>(err.status), ", ", threads_text(), "): ", err.what());
    }
  }

 private:
  dnnl::primitive_desc make_pd(const Dims& x, const Dims& y) const {
    dnnl::primitive_desc pd = geo_.make_pd(activation_md(x, src_dt_, TensorFormat::ChannelsLast),
                                           activation_md(y, dnnl_dtype(dst_dtype_), dst_format_));
    skip_int8_implementations_not_exact(pd, "INT8 convolution '" + name_ + "'");
    return pd;
  }

  std::shared_ptr<memory> reorder_weights(const memory::desc& md) const {
    return reordered_copy(memory::desc(geo_.weights_user_md.dims(), DT::s8, geo_.weights_user_strides),
                          weight_values_.data(), md);
  }

  std::unique_ptr<Int8Entry> make_entry(const Dims& x, const Dims& y) const {
    auto e = std::make_unique<Int8Entry>(make_pd(x, y), prepared_md_, prepared_,
                                         [&](const memory::desc& md) { return reorder_weights(md); });
    if (convert_residual_) {
      // Into the destination's buffer, in its format: s8 for an INT8 output, fp32 for an fp32 one.
      e->residual_md = activation_md(y, dnnl_dtype(residual_dtype_), residual_format_);
      e->held_md = activation_md(y, is_int8(dst_dtype_) ? residual_held_ : DT::f32, dst_format_);
      dnnl::primitive_attr attr;
      attr.set_output_scales(0, {residual_scale_});
      e->residual = dnnl::reorder(
          dnnl::reorder::primitive_desc(cpu_engine(), e->residual_md, cpu_engine(), e->held_md, attr));
    }
    if (input_dtype_ == DType::Float32) {
      e->input_md = activation_md(x, DT::f32, input_format_);
      e->quantized = memory(e->src_md, cpu_engine());
      dnnl::primitive_attr attr;
      attr.set_output_scales(0, {1.0f / input_scale_});
      if (src_zero_point_ != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {src_zero_point_});
      e->quantize = dnnl::reorder(
          dnnl::reorder::primitive_desc(cpu_engine(), e->input_md, cpu_engine(), e->src_md, attr));
    }
    return e;
  }

  std::string name_;
  ConvGeometry geo_;
  double macs_per_element_ = 0.0;  // (not transposed: per element of y)
  DType input_dtype_ = DType::Float32, dst_dtype_ = DType::Float32;
  TensorFormat input_format_ = TensorFormat::Plain, dst_format_ = TensorFormat::Plain;
  DT src_dt_ = DT::u8;
  // The quantized input's zero point (128: a signed fp32 input stored as u8, signed_input_zero_point).
  int32_t src_zero_point_ = 0;
  float input_scale_ = 1.0f;
  bool convert_residual_ = false;
  DT residual_held_ = DT::s8;  // the type an fp32 residual is converted to in an INT8 destination
  DType residual_dtype_ = DType::Float32;
  TensorFormat residual_format_ = TensorFormat::Plain;
  float residual_scale_ = 1.0f;
  memory::desc prepared_md_;
  std::vector<int8_t> weight_values_;
  std::vector<float> bias_values_;
  std::shared_ptr<memory> prepared_;
};

}  // namespace

void register_onednn_int8_convolution(KernelTable& registry) {
  KernelRow row{"onednn_int8", LayerKind::Convolution, int8_conv_applies,
                [](const LayerInfo& info) {
                  return std::unique_ptr<Kernel>(std::make_unique<Int8ConvolutionKernel>(info));
                },
                int8_formats};
  row.int8 = true;
  registry.add(std::move(row));
}

}  // namespace kiln::engine::cpu::onednn
