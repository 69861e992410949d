// Normalization layers (params: kiln/engine/ops/reduction/normalization.h): shape inference and the reference
// kernel.

#include <cmath>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/shape_util.h"
#include "kiln/support/checked_math.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::Normalization>(const Layer& layer,
                                                           const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<NormalizationParams>();
  KILN_CHECK(in.size() == 1, InvalidInput, "normalization needs 1 input");
  check_float(in[0], "input 0");
  const Dims& x = in[0].dims;
  int64_t rank = static_cast<int64_t>(x.size());
  KILN_CHECK(p.epsilon >= 0, InvalidInput, "epsilon must be >= 0");
  Dims wshape;
  if (p.over_trailing_dims()) {
    KILN_CHECK(p.axis >= 0 && p.axis < rank, InvalidInput, "layer / RMS norm axis ", p.axis, " out of range");
    wshape.assign(x.begin() + p.axis, x.end());
  } else {
    KILN_CHECK(rank >= 3, InvalidInput, "group/instance norm needs rank >= 3");
    int64_t g = p.kind == NormalizationParams::Instance ? x[1] : p.groups;
    KILN_CHECK(x[1] >= 0, InvalidInput, "group/instance norm needs a static channel dim");
    KILN_CHECK(g >= 1 && x[1] % g == 0, InvalidInput, "channels ", x[1], " not divisible by groups ", g);
    wshape = {x[1]};
  }
  for (size_t i = 0; i < layer.weights.size() && i < 2; ++i) {
    if (!layer.weights[i].defined()) continue;
    int64_t need = 1;
    bool k = dims_known(wshape);
    if (k) need = checked_product(wshape, "normalization weight elements");
    KILN_CHECK(!k || layer.weights[i].value.numel() == need, InvalidInput, i ? "bias" : "scale", " has ",
               layer.weights[i].value.numel(), " elements, expected ", need);
  }
  return {{in[0].dtype, x}};
}

template <>
void run_kind<LayerKind::Normalization>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<NormalizationParams>();
  const TensorView &x = args.inputs[0], &y = args.outputs[0];
  std::vector<double> xv = load_all(x), yv(xv.size());
  std::vector<double> scale, bias;
  if (layer.weights.size() > 0 && layer.weights[0].defined()) {
    for (float f : host_floats(layer.weights[0].value)) scale.push_back(f);
  }
  if (layer.weights.size() > 1 && layer.weights[1].defined()) {
    for (float f : host_floats(layer.weights[1].value)) bias.push_back(f);
  }
  int64_t groups, group_size, channel_size = 0, channels = 0;
  if (p.over_trailing_dims()) {
    group_size = 1;
    for (size_t i = static_cast<size_t>(p.axis); i < x.dims.size(); ++i) group_size *= x.dims[i];
    groups = group_size ? x.numel() / group_size : 0;
  } else {
    channels = x.dims[1];
    int64_t g = p.kind == NormalizationParams::Instance ? channels : p.groups;
    channel_size = 1;
    for (size_t i = 2; i < x.dims.size(); ++i) channel_size *= x.dims[i];
    group_size = channels / g * channel_size;
    groups = x.dims[0] * g;
  }
  parallel(args.pool, groups, 1, [&](int64_t b, int64_t e) {
    for (int64_t gi = b; gi < e; ++gi) {
      const double* src = &xv[gi * group_size];
      double mean = 0, var = 0;  // (RMS: var is the mean of squares)
      if (p.kind != NormalizationParams::Rms) {
        for (int64_t j = 0; j < group_size; ++j) mean += src[j];
        mean /= static_cast<double>(group_size);
      }
      for (int64_t j = 0; j < group_size; ++j) var += (src[j] - mean) * (src[j] - mean);
      var /= static_cast<double>(group_size);
      double inv = 1.0 / std::sqrt(var + p.epsilon);
      for (int64_t j = 0; j < group_size; ++j) {
        int64_t w = p.over_trailing_dims() ? j : ((gi * group_size + j) / channel_size) % channels;
        double v = (src[j] - mean) * inv;
        if (!scale.empty()) v *= scale[w];
        if (!bias.empty()) v += bias[w];
        yv[gi * group_size + j] = v;
      }
    }
  });
  store_all(y, yv);
}

}  // namespace kiln::engine::ops
