// Host side of the fill kernel (fill.cu): Fill (constant, arange, linspace) of any dtype but f64. Tactic
// "generic". The optional start and delta/end inputs are host values (shape-time scalars), read from
// KernelArgs::input_values.

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/movement/movement_launch.h"

namespace kiln::engine::cuda {
namespace {

class FillKernel : public Kernel {
 public:
  explicit FillKernel(const LayerInfo& info) : p_(info.params<FillParams>()) {}
  void execute(KernelArgs& args) const override {
    const TensorView& y = args.outputs[0];
    auto scalar = [&](size_t k, double fallback) {
      if (args.inputs.size() <= k) return fallback;
      KILN_CHECK(args.input_values.size() > k && args.input_values[k] && args.input_values[k]->numel() >= 1,
                 Internal, "cuda fill: scalar input ", k, " is not a host value");
      return args.input_values[k]->get_as_double(0);
    };
    double start = scalar(1, p_.value), delta = scalar(2, p_.delta);
    int op = p_.op == FillParams::Constant ? 0 : p_.op == FillParams::Arange ? 1 : 2;
    launch_fill(y.data, dcode(y.dtype), y.numel(), op, start, delta, stream_of(args));
    check_launch("fill");
  }

 private:
  FillParams p_;
};

bool applies(const LayerInfo& layer, std::string* why) { return float_dtypes(layer, why); }

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<FillKernel>(layer); }

}  // namespace

void register_fill(KernelTable& rows) { rows.add({"generic", LayerKind::Fill, &applies, &create}); }

}  // namespace kiln::engine::cuda
