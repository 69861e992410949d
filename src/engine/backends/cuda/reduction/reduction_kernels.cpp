// Host side of the reduction kernels (reduction.cu): Reduce, Softmax, Normalization. Tactic "generic". A
// layer norm also writes an E4M3 copy of its output when the builder asks (Layer::format_copies): the input
// of the FP8 matmul after it, where the fp16 output is the residual stream too.

#include <algorithm>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/fp8_quantize.h"
#include "engine/backends/cuda/linalg/matmul_fp8.h"
#include "engine/backends/cuda/reduction/norm_softmax.h"
#include "engine/backends/cuda/reduction/reduction_launch.h"
#include "engine/backends/follow_channels_last.h"

namespace kiln::engine::cuda {
namespace {

/// A reduction over the middle of [outer, mid, inner] in memory: the reduced dims (of more than one element)
/// one run in the input's storage order, the kept ones in their logical order around it; inner == 1 where the
/// run is the innermost (contiguous rows of mid elements).
struct ReducedRun {
  int64_t outer = 1, mid = 1, inner = 1;
};

bool reduced_run(const TensorView& x, const std::vector<int64_t>& axes, ReducedRun& m) {
  int phase = 0;  // 0: outer kept dims, 1: reduced run, 2: inner kept dims
  int64_t last_kept = -1;
  for (size_t k : format_order(x.format, x.dims.size())) {
    const int64_t d = x.dims[k];
    if (d <= 0) return false;
    if (d == 1) continue;
    const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(k)) != axes.end();
    if (reduced) {
      if (phase == 2) return false;
      phase = 1;
      m.mid *= d;
    } else {
      if (static_cast<int64_t>(k) < last_kept) return false;  // the output is written in logical order
      last_kept = static_cast<int64_t>(k);
      (phase == 0 ? m.outer : m.inner) *= d;
      if (phase == 1) phase = 2;
    }
  }
  return phase >= 1;
}

/// Reduce. Follows a ChannelsLast input (a squeeze-excite or classifier spatial mean after a channels-last
/// convolution reads it where it is); the output is written in its logical order, so it is ChannelsLast only
/// where that lies the same ([N, C, 1, 1]).
class ReduceKernel : public Kernel {
 public:
  explicit ReduceKernel(const LayerInfo& info) : p_(info.params<ReduceParams>()) {
    const TensorFormat in = info.inputs[0].format, out = info.outputs[0].format;
    const TensorInfo& y = info.outputs[0];
    const size_t r = y.opt.size();
    KILN_CHECK((in == TensorFormat::Plain || in == TensorFormat::ChannelsLast) &&
                   (out == TensorFormat::Plain ||
                    (out == TensorFormat::ChannelsLast && same_in_channels_last(y.min, r) &&
                     same_in_channels_last(y.max, r))),
               Unsupported, "reduce '", info.layer->name, "': ", tensor_format_name(in), " -> ",
               tensor_format_name(out));
  }
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    const bool arg = p_.op == ReduceOp::ArgMax || p_.op == ReduceOp::ArgMin;
    ReducedRun m;
    if (!arg && reduced_run(x, p_.axes, m)) {
      if (m.inner > 1) {
        launch_reduce_middle(x.data, dcode(x.dtype), m.outer, m.mid, m.inner, y.data, dcode(y.dtype),
                             static_cast<int>(p_.op), stream_of(args));
      } else {
        launch_reduce_rows(x.data, dcode(x.dtype), m.outer, m.mid, y.data, dcode(y.dtype),
                           static_cast<int>(p_.op), stream_of(args));
      }
      check_launch("reduce");
      return;
    }
    auto st = format_strides(x.format, x.dims);
    Dims kept, red;
    std::vector<int64_t> kst, rst;
    for (size_t k = 0; k < x.dims.size(); ++k) {
      bool reduced = std::find(p_.axes.begin(), p_.axes.end(), static_cast<int64_t>(k)) != p_.axes.end();
      (reduced ? red : kept).push_back(x.dims[k]);
      (reduced ? rst : kst).push_back(st[k]);
    }
    launch_reduce(x.data, dcode(x.dtype), to_shape(kept), kst.data(), to_shape(red), rst.data(), y.data,
                  dcode(y.dtype), static_cast<int>(p_.op), stream_of(args));
    check_launch("reduce");
  }

 private:
  ReduceParams p_;
};

TacticFormats reduce_formats(const LayerInfo& info) {
  constexpr TensorFormat kCl = TensorFormat::ChannelsLast;
  TacticFormats f{{TensorFormat::Plain}, {TensorFormat::Plain}};
  const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
  if (x.format != kCl || !format_applies(kCl, x.opt.size())) return f;
  f.inputs[0] = kCl;
  const size_t r = y.opt.size();
  if (format_applies(kCl, r) && same_in_channels_last(y.min, r) && same_in_channels_last(y.max, r)) {
    f.outputs[0] = kCl;
  }
  return f;
}

class SoftmaxKernel : public Kernel {
 public:
  explicit SoftmaxKernel(const LayerInfo& info) : p_(info.params<SoftmaxParams>()) {}
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    int64_t r = static_cast<int64_t>(x.dims.size());
    int64_t axis = p_.axis < 0 ? p_.axis + r : p_.axis;
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= x.dims[k];
    for (int64_t k = axis + 1; k < r; ++k) inner *= x.dims[k];
    int64_t n = r == 0 ? 1 : x.dims[axis];
    launch_softmax(x.data, y.data, dcode(x.dtype), outer, n, inner, p_.log, stream_of(args));
    check_launch("softmax");
  }

 private:
  SoftmaxParams p_;
};

/// The elements a layer norm normalizes together (the dims from its axis on) at the layer's largest shape, or
/// -1 when one of them is unknown.
int64_t layer_norm_row(const LayerInfo& layer) {
  const Dims& dims = layer.inputs[0].max;
  const int64_t r = static_cast<int64_t>(dims.size());
  const int64_t axis_param = layer.params<NormalizationParams>().axis;
  const int64_t axis = axis_param < 0 ? axis_param + r : axis_param;
  int64_t len = 1;
  for (int64_t k = std::max<int64_t>(axis, 0); k < r; ++k) {
    if (dims[k] < 0) return -1;
    len *= dims[k];
  }
  return len;
}

/// Whether a layer (or RMS) norm writes a copy of its output in `format` (KernelRow::copies): E4M3, one copy
/// at most, in the fast kernel's pass (rows of at most kBlockRowMax elements), with a usable dynamic range on
/// the copy (the last output: output 0 when the builder asks, the copy when the kernel is made).
bool norm_copies(const LayerInfo& layer, TensorFormat format) {
  if (format != TensorFormat::E4M3 || !layer.params<NormalizationParams>().over_trailing_dims() ||
      layer.layer->format_copies > 1)
    return false;
  const DType dt = layer.inputs[0].dtype;
  if (dt != DType::Float32 && dt != DType::Float16 && dt != DType::BFloat16) return false;
  const int64_t len = layer_norm_row(layer);
  return len > 0 && len <= kBlockRowMax && usable_fp8_scale(layer.outputs.back().range) > 0;
}

class NormKernel : public Kernel {
 public:
  explicit NormKernel(const LayerInfo& info) : p_(info.params<NormalizationParams>()) {
    const auto& w = info.layer->weights;
    if (w.size() > 0 && w[0].defined()) scale_ = upload(w[0].value, DType::Float32);
    if (w.size() > 1 && w[1].defined()) bias_ = upload(w[1].value, DType::Float32);
    // (create_kernel checked that a copy is one norm_copies accepts)
    if (info.layer->format_copies > 0)
      copy_inverse_scale_ = 1.0f / usable_fp8_scale(info.outputs.back().range);
  }
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    int64_t r = static_cast<int64_t>(x.dims.size());
    int64_t rows = 1, len = 1, groups = 0, group_channels = 0, spatial = 1;
    if (p_.over_trailing_dims()) {
      int64_t axis = p_.axis < 0 ? p_.axis + r : p_.axis;
      for (int64_t k = 0; k < axis; ++k) rows *= x.dims[k];
      for (int64_t k = axis; k < r; ++k) len *= x.dims[k];
    } else {
      int64_t c = x.dims[1];
      groups = p_.kind == NormalizationParams::Instance ? c : p_.groups;
      for (int64_t k = 2; k < r; ++k) spatial *= x.dims[k];
      group_channels = c / groups;
      rows = x.dims[0] * groups;
      len = group_channels * spatial;
    }
    const Stream s = stream_of(args);
    const float eps = static_cast<float>(p_.epsilon);
    const bool rms = p_.kind == NormalizationParams::Rms;
    if (args.outputs.size() > 1) {  // the E4M3 copy, in the same pass where the fast kernel takes the rows
      uint8_t* copy = static_cast<uint8_t*>(args.outputs[1].data);
      if (launch_layer_norm_fast(x.data, y.data, dcode(x.dtype), rows, len, scale_.as<float>(),
                                 bias_.as<float>(), eps, rms, s, {copy, copy_inverse_scale_})) {
        check_launch("layer norm with an e4m3 copy");
        return;
      }
      launch_norm(x.data, y.data, dcode(x.dtype), rows, len, groups, group_channels, spatial,
                  scale_.as<float>(), bias_.as<float>(), eps, rms, s);
      launch_quantize_e4m3(y.data, dcode(y.dtype), y.numel(), copy_inverse_scale_, copy, s);
      check_launch("normalization with an e4m3 copy");
      return;
    }
    launch_norm(x.data, y.data, dcode(x.dtype), rows, len, groups, group_channels, spatial,
                scale_.as<float>(), bias_.as<float>(), eps, rms, s);
    check_launch("normalization");
  }

 private:
  NormalizationParams p_;
  DeviceBuffer scale_, bias_;
  float copy_inverse_scale_ = 0;
};

bool float_only(const LayerInfo& layer, std::string* why) {
  if (!ranks_fit(layer, why)) return false;
  if (!is_floating(layer.inputs[0].dtype) || layer.inputs[0].dtype == DType::Float64) {
    return refuse(why, "input is not f32/f16/bf16");
  }
  return true;
}

bool reduce_applies(const LayerInfo& layer, std::string* why) {
  if (!ranks_fit(layer, why)) return false;
  return float_dtypes(layer, why);
}

template <typename K>
std::unique_ptr<Kernel> make(const LayerInfo& layer) {
  return std::make_unique<K>(layer);
}

}  // namespace

void register_reduction(KernelTable& rows) {
  rows.add({"generic", LayerKind::Reduce, &reduce_applies, &make<ReduceKernel>, &reduce_formats});
  rows.add({"generic", LayerKind::Softmax, &float_only, &make<SoftmaxKernel>});
  rows.add({.name = "generic",
            .kind = LayerKind::Normalization,
            .applies = &float_only,
            .create = &make<NormKernel>,
            .copies = &norm_copies});
}

}  // namespace kiln::engine::cuda
