#pragma once
// The program of a pointwise layer (Elementwise, Activation, Unary, Cast, Select, FusedPointwise) as the CUDA
// backend's pointwise kernels see it: instructions over sources (the layer's inputs, then its weights) and
// the arithmetic they run in. Shared by the generic interpreter (pointwise_kernels.cpp) and the
// NVRTC-compiled kernels (nvrtc_*.cpp), so both compute exactly the same thing. Plain C++ (no CUDA headers).

#include <string>
#include <vector>

#include "engine/backends/cuda/launch.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "kiln/engine/backend.h"

namespace kiln::engine::cuda {

struct PwLayerProgram {
  std::vector<PwInstr> instr;  // operands: source index (< kPwTemp) or kPwTemp + instruction index
  bool integral = false;       // elementwise ops use integer semantics (Div truncates, x / 0 = 0, ...)
  bool use_double = false;     // computes in double (integer programs), else float
  DType out_dtype = DType::Float32;
  std::vector<DType> source_dtypes;  // inputs, then weights
  size_t n_inputs = 0;               // sources [0, n_inputs) are layer inputs, the rest weights
};

/// The program of `layer`; throws kiln::Error(Unsupported) when it exceeds kMaxPwInstrs.
PwLayerProgram pointwise_program(const LayerInfo& layer);

/// Whether a pointwise kernel of this backend runs `layer` (ranks, source and instruction counts).
bool pointwise_applies(const LayerInfo& layer, std::string* why);

/// Element strides of a source of dims `d` broadcast to output dims `out` (0 on broadcast dims), rank of
/// `out`.
void broadcast_strides(const Dims& d, const Dims& out, int64_t* st);

}  // namespace kiln::engine::cuda
