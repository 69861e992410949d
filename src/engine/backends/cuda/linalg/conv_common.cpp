#include "engine/backends/cuda/linalg/conv_common.h"

#ifdef KILN_HAVE_CUDNN
#include <cstring>

#include "engine/backends/cuda/linalg/post_ops.h"

namespace kiln::engine::cuda {

cudnnHandle_t cudnn_handle() {
  thread_local struct Holder {
    cudnnHandle_t h = nullptr;
    ~Holder() {
      if (h) cudnnDestroy(h);
    }
  } holder;
  if (!holder.h) KILN_CUDNN_CHECK(cudnnCreate(&holder.h));
  return holder.h;
}

HostTensor to_krsc(const HostTensor& w) {
  const Dims& d = w.sizes();
  int64_t k = d[0], c = d[1], rs = d[2] * d[3];
  HostTensor out(w.dtype(), {k, d[2], d[3], c});
  size_t es = dtype_size(w.dtype());
  const uint8_t* src = w.data();
  uint8_t* dst = out.mutable_data();
  for (int64_t o = 0; o < k; ++o)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t p = 0; p < rs; ++p)
        std::memcpy(dst + ((o * rs + p) * c + i) * es, src + ((o * c + i) * rs + p) * es, es);
  return out;
}

bool conv_applies(const LayerInfo& layer, std::string* why) {
  const auto& p = layer.params<ConvolutionParams>();
  DType dt = layer.outputs[0].dtype;
  if (dt != DType::Float32 && dt != DType::Float16 && dt != DType::BFloat16) {
    return refuse(why, "dtype is not f32/f16/bf16");
  }
  size_t r = layer.inputs[0].max.size();
  if (r < 3 || r > 5) return refuse(why, "needs 1 to 3 spatial dims");
  if (p.pre_padding != p.post_padding) return refuse(why, "asymmetric padding (cuDNN pads both sides alike)");
  bool bias = layer.layer->weights.size() > 1 && layer.layer->weights[1].defined();
  return PostOpPass::fits(p.post_ops.size(), bias, layer.inputs.size() - 1, why);
}

bool conv_applies_nhwc(const LayerInfo& layer, std::string* why) {
  if (!conv_applies(layer, why)) return false;
  const auto& p = layer.params<ConvolutionParams>();
  if (p.transposed) return refuse(why, "transposed (NHWC is for forward convolutions)");
  for (const auto* list : {&layer.inputs, &layer.outputs}) {
    for (const TensorInfo& t : *list) {
      if (t.max.size() != 4) {
        return refuse(
            why, "NHWC needs 4-D tensors ('" + t.name + "' has rank " + std::to_string(t.max.size()) + ")");
      }
    }
  }
  return true;
}

}  // namespace kiln::engine::cuda

#endif
