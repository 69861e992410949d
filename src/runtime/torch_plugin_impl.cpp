// The PyTorch plug-in of the torch-free runtime (kiln/runtime/torch_plugin.h): a HostModule's PyTorch steps run
// through TorchExecutor, host tensors converted to and from libtorch's. Exported as kiln_torch_plugin_v1 from
// libkiln_runtime_torch.so.

#include <ATen/ATen.h>

#include "kiln/runtime/torch_executor.h"
#include "kiln/runtime/torch_plugin.h"
#include "kiln/support/error.h"
#include "runtime/torch_device.h"

namespace kiln::runtime {
namespace {

class HostTorchRun : public TorchRun {
 public:
  HostTorchRun(std::shared_ptr<const ir::Graph> graph, c10::Device device)
      : graph_(std::move(graph)),
        device_(device),
        executor_(*graph_, device.is_cpu() ? c10::nullopt : c10::optional<c10::Device>(device)) {}

  std::vector<HostTensor> run(const std::vector<HostTensor>& inputs) const override {
    std::vector<c10::IValue> args;
    args.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ir::Value& v = *graph_->inputs()[i];
      const HostTensor& t = inputs[i];
      if (v.kind() == ir::ValueKind::SymInt) {
        args.emplace_back(static_cast<int64_t>(t.get_as_double(0)));
      } else if (v.kind() == ir::ValueKind::SymFloat) {
        args.emplace_back(t.get_as_double(0));
      } else if (v.kind() == ir::ValueKind::SymBool) {
        args.emplace_back(t.get_as_double(0) != 0);
      } else {
        args.emplace_back(to_torch(t).to(device_));
      }
    }
    std::vector<HostTensor> outputs;
    for (const c10::IValue& r : executor_.run(args)) {
      if (r.isTensor()) {
        outputs.push_back(from_torch(r.toTensor().cpu()));
      } else if (r.isInt()) {
        outputs.push_back(HostTensor::from_int64s({r.toInt()}, {}));
      } else if (r.isDouble()) {
        outputs.push_back(from_torch(at::scalar_tensor(r.toDouble(), at::kDouble)));
      } else if (r.isBool()) {
        outputs.push_back(from_torch(at::scalar_tensor(r.toBool(), at::kBool)));
      } else {
        KILN_FAIL(Internal, "a PyTorch run returned a ", r.tagKind(), ", not a tensor or number");
      }
    }
    return outputs;
  }

 private:
  std::shared_ptr<const ir::Graph> graph_;
  c10::Device device_;
  TorchExecutor executor_;
};

class LibtorchPlugin : public TorchPlugin {
 public:
  std::string build() const override { return KILN_PLUGIN_BUILD; }  // src/runtime/layer.cmake
  std::unique_ptr<TorchRun> prepare(std::shared_ptr<const ir::Graph> run, const std::string& backend) const override {
    return std::make_unique<HostTorchRun>(std::move(run), backend_device(backend));
  }
};

}  // namespace

}  // namespace kiln::runtime

/// The plug-in's entry point, found by HostModule with dlsym (torch_plugin.h).
extern "C" const kiln::runtime::TorchPlugin* kiln_torch_plugin_v1() {
  static const kiln::runtime::LibtorchPlugin plugin;
  return &plugin;
}
