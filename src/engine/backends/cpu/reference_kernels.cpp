// The CPU backend's "ref" tactic for every layer kind: wraps the reference implementations.

#include "engine/backends/cpu/kernel_registry.h"
#include "engine/ops/reference.h"

namespace kiln::engine::cpu {
namespace {

class ReferenceKernel : public Kernel {
 public:
  explicit ReferenceKernel(const Layer& layer) : layer_(layer) {}
  void execute(KernelArgs& args) const override { ops::execute(layer_, args); }

 private:
  Layer layer_;  // a copy: weights share storage with the plan
};

}  // namespace

void register_reference_kernels(KernelTable& registry) {
  for (int k = 0; k < kNumLayerKinds; ++k) {
    registry.add(KernelRow{"ref", static_cast<LayerKind>(k), nullptr,
                           [](const LayerInfo& layer) -> std::unique_ptr<Kernel> {
                             return std::make_unique<ReferenceKernel>(*layer.layer);
                           }});
  }
}

}  // namespace kiln::engine::cpu
