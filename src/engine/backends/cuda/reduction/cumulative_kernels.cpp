// Host side of the cumulative kernels (cumulative.cu): Cumulative sum/prod/max/min, exclusive and reverse, of
// any dtype but f64 (Bool is rejected by the network). Tactic "generic".

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/reduction/reduction_launch.h"

namespace kiln::engine::cuda {
namespace {

class CumulativeKernel : public Kernel {
 public:
  explicit CumulativeKernel(const LayerInfo& info) : p_(info.params<CumulativeParams>()) {}
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < p_.axis; ++d) outer *= x.dims[d];
    for (size_t d = static_cast<size_t>(p_.axis) + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
    launch_cumulative(x.data, y.data, dcode(x.dtype), outer, x.dims[p_.axis], inner, static_cast<int>(p_.op),
                      p_.exclusive, p_.reverse, stream_of(args));
    check_launch("cumulative");
  }

 private:
  CumulativeParams p_;
};

bool applies(const LayerInfo& layer, std::string* why) { return float_dtypes(layer, why); }

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<CumulativeKernel>(layer); }

}  // namespace

void register_cumulative(KernelTable& rows) {
  rows.add({"generic", LayerKind::Cumulative, &applies, &create});
}

}  // namespace kiln::engine::cuda
