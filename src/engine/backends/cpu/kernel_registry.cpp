#include "engine/backends/cpu/kernel_registry.h"

#include "kiln/support/error.h"

namespace kiln::engine::cpu {

void CpuKernelRegistry::add(CpuKernelFactory factory) {
  KILN_CHECK(find(factory.kind, factory.name) == nullptr, Internal, "CPU kernel '", factory.name, "' registered twice for ",
             layer_kind_name(factory.kind));
  rows_.push_back(std::move(factory));
}

std::vector<const CpuKernelFactory*> CpuKernelRegistry::candidates(const LayerInfo& layer) const {
  std::vector<const CpuKernelFactory*> out;
  for (const auto& r : rows_) {
    if (r.kind == layer.kind() && (!r.applies || r.applies(layer))) out.push_back(&r);
  }
  return out;
}

const CpuKernelFactory* CpuKernelRegistry::find(LayerKind kind, const std::string& name) const {
  for (const auto& r : rows_) {
    if (r.kind == kind && r.name == name) return &r;
  }
  return nullptr;
}

const CpuKernelRegistry& cpu_kernels() {
  static const CpuKernelRegistry kRegistry = [] {
    CpuKernelRegistry r;
    register_reference_kernels(r);
    register_fast_kernels(r);
    return r;
  }();
  return kRegistry;
}

}  // namespace kiln::engine::cpu
