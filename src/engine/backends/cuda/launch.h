#pragma once
// What every launch function of the CUDA backend's device kernels shares. Each family's kernels are plain
// launch functions over POD parameter structs, declared in its <family>/<family>_launch.h; those headers are
// shared by the .cu files (nvcc) and the host-side Kernel classes (.cpp, g++): they include nothing of Kiln
// beyond this header and fixed-width integers, so nvcc never parses the engine's headers.
//
// Element types are Kiln DType values as integers (DType::Float32 = 0, ... Bool = 9). Shapes have rank <= 8.
// Every launch enqueues on the given stream and returns at once; launch errors are reported by the caller
// through check_launch() (cuda_util.h).

#include <cstdint>

struct CUstream_st;

namespace kiln::engine::cuda {

using Stream = CUstream_st*;
constexpr int kMaxRank = 8;

enum DCode : int {
  kF32 = 0,
  kF16 = 1,
  kBF16 = 2,
  kF64 = 3,
  kI64 = 4,
  kI32 = 5,
  kI16 = 6,
  kI8 = 7,
  kU8 = 8,
  kBool = 9
};

/// Where a kernel also (or instead) writes FP8 E4M3 codes (TensorFormat::E4M3): `data` gets each value it stores
/// times `inverse_scale` (1 / the tensor's scale), saturated to +-448 and rounded to nearest even, as a Reformat
/// to E4M3 of the stored values would; null: nowhere.
struct E4m3Out {
  uint8_t* data = nullptr;
  float inverse_scale = 1.0f;
};

/// A shape (iteration space) of rank <= kMaxRank.
struct Shape {
  int rank = 0;
  int64_t d[kMaxRank] = {};
};

}  // namespace kiln::engine::cuda
