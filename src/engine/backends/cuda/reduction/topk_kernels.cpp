// Host side of the topk kernels (topk.cu): TopK of any dtype but f64 (Bool is rejected by the network), axis
// length < 2^31. Tactic "generic". k is the output's axis length (from the params or the host-valued k
// input).

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/reduction/reduction_launch.h"

namespace kiln::engine::cuda {
namespace {

class TopKKernel : public Kernel {
 public:
  explicit TopKKernel(const LayerInfo& info) : p_(info.params<TopKParams>()) {}
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &values = args.outputs[0], &indices = args.outputs[1];
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < p_.axis; ++d) outer *= x.dims[d];
    for (size_t d = static_cast<size_t>(p_.axis) + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
    int64_t n = x.dims[p_.axis], k = values.dims[p_.axis];
    KILN_CHECK(k >= 0 && k <= n, InvalidInput, "topk: k=", k, " out of range for axis size ", n);
    launch_topk(x.data, dcode(x.dtype), outer, n, inner, k, p_.largest, values.data, indices.as<long long>(),
                stream_of(args));
    check_launch("topk");
  }

 private:
  TopKParams p_;
};

bool applies(const LayerInfo& layer, std::string* why) {
  if (!float_dtypes(layer, why)) return false;
  const auto& p = layer.params<TopKParams>();
  const Dims& d = layer.inputs[0].max;
  if (p.axis >= 0 && p.axis < static_cast<int64_t>(d.size()) && d[p.axis] >= 0x7fffffff) {
    return refuse(why, "topk axis of 2^31 or more elements");
  }
  return true;
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<TopKKernel>(layer); }

}  // namespace

void register_topk(KernelTable& rows) { rows.add({"generic", LayerKind::TopK, &applies, &create}); }

}  // namespace kiln::engine::cuda
