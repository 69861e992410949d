#pragma once
// The post-op pass of the cuda convolution and matrix multiply kernels: what their library call (cuDNN,
// cuBLASLt) does not fuse -- a per-channel bias, activations, residual sums -- applied in place to the output
// after the call, as one chain of pointwise instructions. It runs as the vectorized epilogue (epilogue.h)
// when every residual has the output's dims and dtype (what the builder's fusion produces), else through the
// generic pointwise interpreter with broadcast strides. Both compute the same chain with the same formulas.
// Channels-last outputs (the cuda "cudnn_nhwc" convolutions) run over the buffer's memory order: the bias is
// per element of the innermost dim, residuals are read in the same format.

#include <string>
#include <vector>

#include "engine/backends/cuda/launch.h"
#include "engine/backends/cuda/linalg/epilogue.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "kiln/engine/backend.h"

namespace kiln::engine::cuda {

class PostOpPass {
 public:
  PostOpPass() = default;
  /// The pass over `post_ops[first..]` for an output of `dtype` (fp32, fp16 or bf16). `bias`: device values
  /// of `dtype`, one per index of output dim `channel_dim`, added first; null for none. The Sum post-ops read
  /// the layer inputs first_residual_input, first_residual_input + 1, ... in order. `channels_last`: the
  /// output and the residuals are stored channels-last (TensorFormat::ChannelsLast, rank 3 to 5: the channel
  /// dim `channel_dim` = 1 is innermost in memory, so the bias repeats every C elements); residuals then need
  /// the output's rank.
  PostOpPass(const std::vector<PostOp>& post_ops, size_t first, const void* bias, int channel_dim,
             int first_residual_input, DType dtype, bool channels_last = false);

  /// Whether there is nothing to do.
  bool empty() const { return instr_.empty(); }
  /// Whether run() takes the vectorized epilogue for these arguments (else the generic interpreter).
  bool uses_epilogue(const KernelArgs& args) const;
  /// The vectorized epilogue's parameters for these arguments, when run() would take it (false, leaving `p`
  /// alone, otherwise): what a kernel that applies the chain to its results as it stores them runs
  /// (epilogue_apply.cuh), instead of a pass over the output after it.
  bool epilogue_params(const KernelArgs& args, EpilogueParams* p) const;
  /// Applies the pass to args.outputs[0] in place, on the arguments' stream; `what` names the layer kind in
  /// launch errors.
  void run(const KernelArgs& args, const char* what) const;
  /// Applies the pass to args.outputs[0] (a Plain buffer of the pass's dtype: a kernel's staged result) and
  /// stores the results as E4M3 codes of result * inverse_scale into `e4m3` (TensorFormat::E4M3): one pass
  /// through the epilogue where it applies, else the pass in place and then the quantization. An empty pass
  /// only quantizes.
  void run_to_e4m3(const KernelArgs& args, void* e4m3, float inverse_scale, const char* what) const;
  /// Applies the pass through the generic interpreter whatever the arguments (what run() falls back to); for
  /// tests that compare the two paths. Launch errors are left to the caller's check_launch().
  void run_generic(const KernelArgs& args) const;

  /// Pass limits, as the kernels' applies() check them: at most kMaxPwInstrs instructions (post-ops plus the
  /// bias) and kMaxPwSources sources (the output, the bias, the residuals).
  static bool fits(size_t post_ops, bool bias, size_t residuals, std::string* why);

 private:
  std::vector<PwInstr> instr_;
  const void* bias_ = nullptr;
  int channel_dim_ = 1;
  std::vector<int> residual_inputs_;
  DType dtype_ = DType::Float32;
  bool channels_last_ = false;
};

/// Whether the cuBLASLt matrix multiply (matmul.cpp) runs a post-op pass for `post_ops` (fp16 / bf16 / fp32
/// tactics): anything beyond a leading tanh-GELU epilogue or a leading residual added as cuBLASLt's C.
bool matmul_post_ops_need_a_pass(const std::vector<PostOp>& post_ops);

}  // namespace kiln::engine::cuda
