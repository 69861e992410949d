#pragma once
// A 2-D channels-last forward convolution as a cuDNN graph (the backend descriptor API), with the bias, one
// residual sum and ReLU fused into it as pointwise operations: y = relu(conv(x, w) + bias + alpha2 z); an
// INT8 one (x, w int8, int32 accumulation) first scales the sum per output channel:
// y = relu(conv(x, w) * scale + bias + z) [* post], in fp32 until y is stored (fp16, bf16, fp32, or int8
// rounded to nearest even and saturated, as cuDNN converts): a residual's factor goes into a per-channel
// `post` scale after the ReLU (which commutes with it), because cuDNN 9.19 has no INT8 engine for a graph
// whose residual add has an alpha2 other than 1 (bench/gpu/cudnn_int8_probe.cu, an H100). The
// graph, an engine configuration and its execution plan are made once per shape; a call is one
// cudnnBackendExecute with a variant pack (the data pointers) kept while the pointers stay the same. On an
// H100 that costs the host 6-12 us per call where the legacy cudnnConvolutionForward costs 34-125 us
// (bench/gpu/cudnn_host_cost.cpp), which decides the speed of an engine run without CUDA graphs.
//
// Only engine configurations that accumulate in fp32 and transform no tiles (no FFT or Winograd numerical
// note, no reduced-precision reduction) are taken; candidates come in cuDNN's heuristic order (mode A).

#ifdef KILN_HAVE_CUDNN
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/engine/ops/params.h"
#include "kiln/support/dtype.h"

namespace kiln::engine::cuda {

/// What the graph computes. Dims are logical NCHW ([N, C, H, W], w [K, C/groups, R, S]); memory is NHWC
/// (KRSC for w) with packed strides.
struct ConvGraphSpec {
  DType dtype = DType::Float16;  // x, w, y, bias and z (fp16 or bf16); Int8: x and w (s8)
  /// With an Int8 dtype: y's and z's dtypes (fp16, bf16, fp32 or Int8); the bias and scale are fp32.
  DType y_dtype = DType::Float16, z_dtype = DType::Float16;
  Dims x, w, y;
  std::vector<int64_t> padding, stride, dilation;  // 2 each
  bool bias = false;                               // + bias[K]
  bool residual = false;                           // + alpha2 * z, z like y
  float alpha2 = 1.0f;
  bool relu = false;  // then ReLU
  bool post_scale = false;  // then * post[K] (fp32)
};

/// One finalized execution plan of a ConvGraphSpec (one engine configuration), with its variant pack.
class ConvGraphPlan {
 public:
  ~ConvGraphPlan();
  ConvGraphPlan(const ConvGraphPlan&) = delete;
  ConvGraphPlan& operator=(const ConvGraphPlan&) = delete;

  /// The plans of the first `max` engine configurations of cuDNN's heuristic for `spec` that finalize,
  /// compute as the file comment says and need at most `workspace_limit` bytes, in the heuristic's order.
  /// Each plan's rank() is its position among the heuristic's configurations. With `rank` >= 0, only that
  /// configuration's plan when it qualifies (else the first that does): finalizing a runtime-fusion engine
  /// compiles its kernel, a few hundred milliseconds each. Empty when there is none (cuDNN has no engine for
  /// the graph); throws kiln::Error on a malformed spec.
  static std::vector<std::unique_ptr<ConvGraphPlan>> candidates(cudnnHandle_t handle,
                                                                const ConvGraphSpec& spec,
                                                                size_t workspace_limit, int max,
                                                                int rank = -1);

  /// The position of this plan's configuration in the heuristic's list.
  int rank() const { return rank_; }
  size_t workspace() const { return workspace_; }

  /// Enqueues the convolution on the handle's stream. `bias` and `z` are read when the spec has them,
  /// `scale` (fp32 per output channel) when it is INT8, `post` (the same) when it has post_scale.
  cudnnStatus_t execute(cudnnHandle_t handle, const void* x, const void* w, void* y, const void* bias,
                        const void* z, void* workspace, const void* scale = nullptr, const void* post = nullptr);

 private:
  ConvGraphPlan() = default;
  cudnnBackendDescriptor_t plan_ = nullptr;
  cudnnBackendDescriptor_t pack_ = nullptr;
  std::vector<int64_t> uids_;
  std::array<const void*, 8> pack_pointers_{};  // what pack_ was made for: x, w, y, bias, z, workspace, scale, post
  size_t workspace_ = 0;
  int rank_ = 0;
};

}  // namespace kiln::engine::cuda

#endif
