// Host side of the scatter kernels (scatter.cu): Scatter without reduction and with Add. Tactic "generic".
// Any dtype but f64; Int64 or Int32 indices.

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/movement/movement_launch.h"

namespace kiln::engine::cuda {
namespace {

class ScatterKernel : public Kernel {
 public:
  explicit ScatterKernel(const LayerInfo& info) : p_(info.params<ScatterParams>()) {
    // Without reduction, one uint64 per output element says which index element writes it.
    if (p_.reduction == ScatterParams::None) {
      workspace_ = static_cast<size_t>(numel(info.outputs[0].max)) * sizeof(unsigned long long);
    }
  }
  size_t workspace_size() const override { return workspace_; }
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &idx = args.inputs[1], &upd = args.inputs[2], &y = args.outputs[0];
    for (size_t d = 0; d < x.dims.size(); ++d) {
      KILN_CHECK(static_cast<int64_t>(d) == p_.axis || idx.dims[d] <= x.dims[d], InvalidInput,
                 "scatter: index dims exceed data dims (dim ", d, ": ", idx.dims[d], " > ", x.dims[d], ")");
    }
    Stream s = stream_of(args);
    if (x.data != y.data && y.nbytes()) {
      KILN_CUDA_CHECK(cudaMemcpyAsync(y.data, x.data, y.nbytes(), cudaMemcpyDeviceToDevice, s));
    }
    KILN_CHECK(
        p_.reduction != ScatterParams::None || args.workspace_size >= static_cast<size_t>(y.numel()) * 8,
        Internal, "cuda scatter: workspace too small");
    launch_scatter(y.data, to_shape(y.dims), dcode(y.dtype), idx.data, dcode(idx.dtype), to_shape(idx.dims),
                   upd.data, static_cast<int>(p_.axis), p_.reduction == ScatterParams::Add ? 1 : 0,
                   static_cast<unsigned long long*>(args.workspace), s);
    check_launch("scatter");
  }

 private:
  ScatterParams p_;
  size_t workspace_ = 0;
};

bool applies(const LayerInfo& layer, std::string* why) {
  return ranks_fit(layer, why) && float_dtypes(layer, why);
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<ScatterKernel>(layer); }

}  // namespace

void register_scatter(KernelTable& rows) { rows.add({"generic", LayerKind::Scatter, &applies, &create}); }

}  // namespace kiln::engine::cuda
