#pragma once
// FP8 E4M3 on the device: the rounding every cuda kernel that writes E4M3 (TensorFormat::E4M3) uses, the
// hardware conversion with saturation to +-448, rounding to nearest even -- bit for bit the host's
// ops::float_to_e4m3 (tests/engine/backends/cuda/fp8_matmul_test.cpp checks it).

#include <cuda_fp8.h>

#include <cstdint>

namespace kiln::engine::cuda {

/// The E4M3 code of `v` (already divided by the tensor's scale).
__device__ __forceinline__ uint8_t to_e4m3(float v) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
}

}  // namespace kiln::engine::cuda
