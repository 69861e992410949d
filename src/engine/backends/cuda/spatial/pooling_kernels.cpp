// Host side of the pooling kernels (pooling.cu, pool_fast.cu): tactics "nhwc" (4-D channels-last tensors)
// and "generic" (planar). A global pooling (adaptive to 1 x 1: a squeeze-excite or classifier average) is a
// reduction over the spatial dims and runs as one (pool_fast.cu for float tensors, else reduction.cu): the
// pooling kernels give every output one thread, which walked 12544 inputs alone for efficientnet_b0's first
// squeeze-excite (1.7 ms at batch 32 on an H100).

#include <cmath>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/reduction/reduction_launch.h"
#include "engine/backends/cuda/spatial/spatial_launch.h"

namespace kiln::engine::cuda {
namespace {

/// Per-spatial-dim values padded in front to 3 entries (empty: `fill` for every dim), as the reference does.
void to3(std::vector<int64_t> v, size_t ns, int64_t fill, int64_t* out) {
  if (v.empty()) v.assign(ns, fill);
  while (v.size() < 3) v.insert(v.begin(), fill);
  for (int i = 0; i < 3; ++i) out[i] = v[i];
}

class PoolKernel : public Kernel {
 public:
  PoolKernel(const LayerInfo& info, bool channels_last)
      : p_(info.params<PoolingParams>()), nhwc_(channels_last) {
    const Dims& x = info.inputs[0].max;
    if (nhwc_ && p_.adaptive) workspace_ = global_pool_workspace(x[0], x[1]);
  }
  size_t workspace_size() const override { return workspace_; }
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    if (p_.adaptive && numel(Dims(y.dims.begin() + 2, y.dims.end())) == 1) {
      global(x, y, args);
      return;
    }
    size_t ns = x.dims.size() - 2;
    PoolParams p;
    p.kind = p_.kind == PoolingParams::Max ? 0 : 1;
    p.adaptive = p_.adaptive;
    p.count_include_pad = p_.count_include_pad;
    to3(Dims(x.dims.begin() + 2, x.dims.end()), ns, 1, p.in);
    to3(Dims(y.dims.begin() + 2, y.dims.end()), ns, 1, p.out);
    to3(p_.window, ns, 1, p.win);
    to3(p_.stride, ns, 1, p.stride);
    to3(p_.pre_padding, ns, 0, p.pad);
    to3(p_.dilation, ns, 1, p.dil);
    if (nhwc_) p.channels = x.dims[1];
    if (nhwc_ && launch_pool2d_nhwc_fast(x.data, y.data, dcode(x.dtype), x.dims[0], p, stream_of(args))) {
      check_launch("pooling");
      return;
    }
    launch_pool(x.data, y.data, dcode(x.dtype), nhwc_ ? x.dims[0] : x.dims[0] * x.dims[1], p,
                stream_of(args));
    check_launch("pooling");
  }

 private:
  /// The mean or max over every spatial element of each (n, c): channels-last x is [N, spatial, C] in memory
  /// (the middle-run reduction), planar x is rows of spatial elements.
  void global(const TensorView& x, const TensorView& y, KernelArgs& args) const {
    const bool is_max = p_.kind == PoolingParams::Max;
    const int op = static_cast<int>(is_max ? ReduceOp::Max : ReduceOp::Mean);
    const int64_t n = x.dims[0], c = x.dims[1], spatial = numel(Dims(x.dims.begin() + 2, x.dims.end()));
    const Stream stream = stream_of(args);
    if (x.dtype == y.dtype && launch_global_pool(x.data, y.data, dcode(x.dtype), n, spatial, c, nhwc_, is_max,
                                                 args.workspace, args.workspace_size, stream)) {
      check_launch("global pooling");
      return;
    }
    if (nhwc_) {
      launch_reduce_middle(x.data, dcode(x.dtype), n, spatial, c, y.data, dcode(y.dtype), op, stream);
    } else {
      const int64_t kept_st = spatial, red_st = 1;
      launch_reduce(x.data, dcode(x.dtype), to_shape({n * c}), &kept_st, to_shape({spatial}), &red_st, y.data,
                    dcode(y.dtype), op, stream);
    }
    check_launch("global pooling");
  }

  PoolingParams p_;
  bool nhwc_ = false;  // input and output channels-last
  size_t workspace_ = 0;
};

bool pool_applies(const LayerInfo& layer, std::string* why) {
  size_t r = layer.inputs[0].max.size();
  if (r < 3 || r > 5) return refuse(why, "pooling needs 1 to 3 spatial dims");
  return float_dtypes(layer, why);
}

/// The channels-last tactic: 2-D pooling (4-D tensors) of any kind the planar kernel runs.
bool pool_nhwc_applies(const LayerInfo& layer, std::string* why) {
  if (!pool_applies(layer, why)) return false;
  if (layer.inputs[0].max.size() != 4) return refuse(why, "channels-last pooling is for 4-D tensors");
  return true;
}

TacticFormats pool_nhwc_formats(const LayerInfo&) {
  return {{TensorFormat::ChannelsLast}, {TensorFormat::ChannelsLast}};
}

std::unique_ptr<Kernel> make_pool(const LayerInfo& layer) {
  return std::make_unique<PoolKernel>(layer, false);
}
std::unique_ptr<Kernel> make_pool_nhwc(const LayerInfo& layer) {
  return std::make_unique<PoolKernel>(layer, true);
}

}  // namespace

void register_pooling(KernelTable& rows) {
  // Channels-last first (as the cudnn_nhwc convolutions): without timing, a CNN's pooling between NHWC
  // convolutions needs no reformat; with timing, a pooling fed by a Plain tensor pays for the reformat the
  // "nhwc" candidate needs and "generic" wins.
  rows.add({.name = "nhwc",
            .kind = LayerKind::Pooling,
            .applies = &pool_nhwc_applies,
            .create = &make_pool_nhwc,
            .formats = &pool_nhwc_formats});
  rows.add({"generic", LayerKind::Pooling, &pool_applies, &make_pool});
}

}  // namespace kiln::engine::cuda
