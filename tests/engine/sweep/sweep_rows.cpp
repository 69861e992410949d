// The kernel rows each backend registers, for the sweep's coverage check.

#include "engine/backends/cpu/kernel_registry.h"
#include "engine/sweep/sweep.h"
#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/cuda_util.h"
#endif

namespace kiln::engine::sweep {

std::vector<RowId> registered_rows(const std::string& backend) {
  std::vector<RowId> out;
  // INT8 and FP8 rows run only on tensors with dynamic ranges and match the reference only within the
  // quantization step: tests/engine/int8_test.cpp and tests/engine/backends/cuda/fp8_matmul_test.cpp check
  // them against the quantized product and fp32 builds instead.
  if (backend == "cpu") {
    for (const auto& r : cpu::cpu_kernels().rows()) {
      if (!r.int8 && !r.fp8) out.emplace_back(r.kind, r.name);
    }
  }
#ifdef KILN_HAVE_CUDA
  if (backend == "cuda") {
    for (const auto& r : cuda::cuda_kernels().rows()) {
      if (!r.int8 && !r.fp8) out.emplace_back(r.kind, r.name);
    }
  }
#endif
  return out;
}

std::vector<std::pair<RowId, std::string>> hardware_dependent_rows(const std::string& backend) {
  if (backend == "cpu") {
    return {{{LayerKind::Convolution, "onednn_winograd"},
             "oneDNN implements Winograd convolution only on some x86 instruction sets (avx512 cores)"}};
  }
  if (backend == "cuda") {
    std::vector<std::pair<RowId, std::string>> out = {
        {{LayerKind::Attention, "flash"}, "flash attention needs a GPU of compute capability 8.0 or newer"},
        {{LayerKind::Attention, "flash_wide"},
         "flash attention needs a GPU of compute capability 8.0 or newer"},
        {{LayerKind::Attention, "flash_tall"},
         "flash attention needs a GPU of compute capability 8.0 or newer"}};
    for (LayerKind k : {LayerKind::Elementwise, LayerKind::Activation, LayerKind::Unary, LayerKind::Cast,
                        LayerKind::Select, LayerKind::FusedPointwise}) {
      out.push_back({{k, "nvrtc"}, "the nvrtc tactics need the NVRTC library at run time"});
    }
    return out;
  }
  return {};
}

}  // namespace kiln::engine::sweep
