// Host side of the reduction kernels (reduction.cu): Reduce, Softmax, Normalization. Tactic "generic".

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/reduction/reduction_launch.h"

namespace kiln::engine::cuda {
namespace {

class ReduceKernel : public Kernel {
 public:
  explicit ReduceKernel(const LayerInfo& info) : p_(info.params<ReduceParams>()) {}
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    auto st = row_strides(x.dims);
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

class NormKernel : public Kernel {
 public:
  explicit NormKernel(const LayerInfo& info) : p_(info.params<NormalizationParams>()) {
    const auto& w = info.layer->weights;
    if (w.size() > 0 && w[0].defined()) scale_ = upload(w[0].value, DType::Float32);
    if (w.size() > 1 && w[1].defined()) bias_ = upload(w[1].value, DType::Float32);
  }
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    int64_t r = static_cast<int64_t>(x.dims.size());
    int64_t rows = 1, len = 1, groups = 0, group_channels = 0, spatial = 1;
    if (p_.kind == NormalizationParams::Layer) {
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
    launch_norm(x.data, y.data, dcode(x.dtype), rows, len, groups, group_channels, spatial,
                scale_.as<float>(), bias_.as<float>(), static_cast<float>(p_.epsilon), stream_of(args));
    check_launch("normalization");
  }

 private:
  NormalizationParams p_;
  DeviceBuffer scale_, bias_;
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
  rows.add({"generic", LayerKind::Reduce, &reduce_applies, &make<ReduceKernel>});
  rows.add({"generic", LayerKind::Softmax, &float_only, &make<SoftmaxKernel>});
  rows.add({"generic", LayerKind::Normalization, &float_only, &make<NormKernel>});
}

}  // namespace kiln::engine::cuda
