#include "engine/backends/cpu/kernel_registry.h"

namespace kiln::engine::cpu {

const KernelTable& cpu_kernels() {
  static const KernelTable kTable = [] {
    KernelTable t;
    register_reference_kernels(t);
    register_fast_kernels(t);
    return t;
  }();
  return kTable;
}

}  // namespace kiln::engine::cpu
