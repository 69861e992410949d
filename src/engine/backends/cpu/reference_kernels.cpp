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

/// The reference Reformat moves elements between layouts; E4M3 (codes scaled by a tensor's range, which it
/// does not have) is no layout.
bool reformat_between_layouts(const LayerInfo& layer, std::string* why) {
  const auto& p = layer.params<ReformatParams>();
  if (p.from == TensorFormat::E4M3 || p.to == TensorFormat::E4M3) {
    return refuse(why, "the cpu backend does not quantize to or from e4m3");
  }
  return true;
}

}  // namespace

void register_reference_kernels(KernelTable& registry) {
  for (int k = 0; k < kNumLayerKinds; ++k) {
    const bool reformat = static_cast<LayerKind>(k) == LayerKind::Reformat;
    registry.add(KernelRow{"ref", static_cast<LayerKind>(k), reformat ? &reformat_between_layouts : nullptr,
                           [](const LayerInfo& layer) -> std::unique_ptr<Kernel> {
                             return std::make_unique<ReferenceKernel>(*layer.layer);
                           }});
  }
}

}  // namespace kiln::engine::cpu
