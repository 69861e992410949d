// Host side of the nonzero kernels (nonzero.cu): NonZero of any dtype but f64, rank <= 8. Tactic "generic".
// The output's row count depends on the data and the engine needs it on the host (ExecutionContext sizes the
// OutputAllocator's buffer and the following layers' dims with it), so this kernel, and only it, waits for
// its stream after enqueueing its work.

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/movement/movement_launch.h"

namespace kiln::engine::cuda {
namespace {

class NonZeroKernel : public Kernel {
 public:
  explicit NonZeroKernel(const LayerInfo&) {}
  size_t workspace_size() const override { return (kNonZeroBlocks + 1) * sizeof(long long); }
  void execute(KernelArgs& args) const override {
    const TensorView& x = args.inputs[0];
    TensorView& y = args.outputs[0];
    KILN_CHECK(args.workspace && args.workspace_size >= workspace_size(), Internal,
               "cuda nonzero: no workspace");
    Stream s = stream_of(args);
    check_not_recording(s, "nonzero (its row count must reach the host)");
    long long count = 0;
    launch_nonzero(x.data, dcode(x.dtype), to_shape(x.dims), y.as<long long>(),
                   static_cast<long long*>(args.workspace), &count, s);
    check_launch("nonzero");
    KILN_CUDA_CHECK(cudaStreamSynchronize(s));
    y.dims = {static_cast<int64_t>(count), static_cast<int64_t>(x.dims.size())};
  }
};

bool applies(const LayerInfo& layer, std::string* why) {
  return ranks_fit(layer, why) && float_dtypes(layer, why);
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<NonZeroKernel>(layer); }

}  // namespace

void register_nonzero(KernelTable& rows) { rows.add({"generic", LayerKind::NonZero, &applies, &create}); }

}  // namespace kiln::engine::cuda
