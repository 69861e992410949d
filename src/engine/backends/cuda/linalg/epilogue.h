#pragma once
// The post-op epilogue of convolution and matrix multiply (epilogue.cu): bias, activations and residual sums
// applied in place to the library call's output in one pass, at memory speed: 16-byte vector loads and
// stores, 32-bit index math, per-channel values found without per-element division. It runs the chain of
// pointwise instructions the generic interpreter would run (same formulas, pointwise_ops.cuh), restricted to
// what post-ops need: every source is either the output's own elements or one value per channel, every
// source and the output have one float dtype, and each instruction reads the previous one's result.
// Plain C++ header shared by epilogue.cu (nvcc) and the host side (post_ops.cpp).

#include "engine/backends/cuda/launch.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"

namespace kiln::engine::cuda {

/// A source of the epilogue: the output's own elements (element i) when `len` is 0, else one value per
/// channel (element (i / div) % len).
struct EpilogueSource {
  const void* data = nullptr;
  int64_t div = 1, len = 0;
};

/// The pass: out = chain(out) over n elements. Source 0 is the output itself. Instruction s reads the result
/// of instruction s - 1 (instruction 0 reads source 0) and is kPwActivation (op = ActivationKind, alpha,
/// beta) or kPwScaleAdd (result + alpha * source b); its `a` operand is ignored.
struct EpilogueParams {
  void* out = nullptr;
  int dtype = kF32;  // of the output and every source: kF32, kF16 or kBF16
  int64_t n = 0;     // elements, at most kMaxEpilogueElements
  int n_sources = 0;
  EpilogueSource src[kMaxPwSources];
  int n_instr = 0;
  PwInstr instr[kMaxPwInstrs];
  /// Where the results go instead of back into `out` when set: E4M3 codes (TensorFormat::E4M3) of result *
  /// e4m3_inverse_scale, one byte per element.
  void* e4m3_out = nullptr;
  float e4m3_inverse_scale = 1.0f;
};

/// Element counts the epilogue takes (32-bit index math); larger outputs go through launch_pointwise.
constexpr int64_t kMaxEpilogueElements = (int64_t{1} << 31) - 1;

/// Enqueues the pass on `stream`: 16-byte vectors when the output and every per-element source are 16-byte
/// aligned (and e4m3_out, when set, to a vector's bytes), else one element per thread.
void launch_epilogue(const EpilogueParams& params, Stream stream);

}  // namespace kiln::engine::cuda
