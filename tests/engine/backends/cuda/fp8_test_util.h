#pragma once
// What the FP8 engine tests share: the skip where the GPU has no FP8 tensor cores.

#include <cuda_runtime.h>

#include "engine/engine_test_util.h"

/// Skips unless the GPU has FP8 tensor cores (compute capability 8.9 and up).
#define KILN_REQUIRE_FP8_GPU()                                                                         \
  KILN_REQUIRE_GPU();                                                                                  \
  do {                                                                                                 \
    int dev = 0, major = 0, minor = 0;                                                                 \
    cudaGetDevice(&dev);                                                                               \
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);                            \
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);                            \
    if (10 * major + minor < 89) GTEST_SKIP() << "no FP8 tensor cores (compute capability below 8.9)"; \
  } while (0)
