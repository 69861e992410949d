// Host side of the resize kernel (resize.cu): Resize, nearest and linear (align_corners or not), 1-3 spatial
// dims, f32/f16/bf16. Tactic "generic". The per-dim scales are computed here exactly as the CPU reference
// does.

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/spatial/spatial_launch.h"

namespace kiln::engine::cuda {
namespace {

class ResizeKernel : public Kernel {
 public:
  explicit ResizeKernel(const LayerInfo& info) : p_(info.params<ResizeParams>()) {}
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    size_t ns = x.dims.size() - 2;
    ResizeArgs a;
    a.mode = p_.mode == ResizeParams::Nearest ? 0 : 1;
    a.align_corners = p_.align_corners;
    a.planes = x.dims[0] * x.dims[1];
    for (size_t i = 0; i < 3; ++i) {
      bool spatial = i >= 3 - ns;
      a.in[i] = spatial ? x.dims[x.dims.size() - 3 + i] : 1;
      a.out[i] = spatial ? y.dims[y.dims.size() - 3 + i] : 1;
      // Given scales set the source ratio only when they also set the output size (no output_size, no shape
      // input).
      bool has_scale = spatial && !p_.scales.empty() && p_.output_size.empty() && args.inputs.size() == 1;
      a.scale[i] = has_scale ? 1.0 / p_.scales[i + ns - 3]
                             : static_cast<double>(a.in[i]) / static_cast<double>(a.out[i]);
    }
    launch_resize(x.data, y.data, dcode(x.dtype), a, stream_of(args));
    check_launch("resize");
  }

 private:
  ResizeParams p_;
};

bool applies(const LayerInfo& layer, std::string* why) {
  size_t r = layer.inputs[0].max.size();
  if (r < 3 || r > 5) return refuse(why, "resize needs 1 to 3 spatial dims");
  return float_dtypes(layer, why);
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<ResizeKernel>(layer); }

}  // namespace

void register_resize(KernelTable& rows) { rows.add({"generic", LayerKind::Resize, &applies, &create}); }

}  // namespace kiln::engine::cuda
