// A PyTorch plug-in of another Kiln build, for HostModule.PluginOfAnotherBuildIsRefused: it only names its build.

#include "kiln/runtime/torch_plugin.h"

namespace {

class ForeignPlugin : public kiln::runtime::TorchPlugin {
 public:
  std::string build() const override { return "0.0.0 another-build"; }
  std::unique_ptr<kiln::runtime::TorchRun> prepare(std::shared_ptr<const kiln::ir::Graph>,
                                                   const std::string&) const override {
    return nullptr;
  }
};

}  // namespace

extern "C" const kiln::runtime::TorchPlugin* kiln_torch_plugin_v1() {
  static const ForeignPlugin plugin;
  return &plugin;
}
