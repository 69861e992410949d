#pragma once
// What a cuda convolution kernel (tactics "cudnn_nhwc", "cudnn_nhwc_tf32", "cudnn", "cudnn_tf32", and
// "cudnn_graph" with layout 2) stores in the plan about the cuDNN forward algorithm (or graph API engine
// configuration) the builder timed for it. Plain C++ (no CUDA headers):
// unit-tested without a GPU.
//
// Plan data (Kernel::plan_data, a fixed-size little-endian blob, version kConvPlanDataVersion): magic "KCNV",
// u32 version, then int64 fields: the kernel's configuration (dtype code, layout 0 = NCHW / 1 = NHWC / 2 =
// NHWC through the graph API, tf32 0/1), the algorithm (cudnnConvolutionFwdAlgo_t; for layout 2 the rank of
// the engine configuration in cuDNN's heuristic list) and math type (cudnnMathType_t; 0 for layout 2) that
// ran fastest, and the input dims at the layer's opt shape (rank, then 5 dims, unused ones 0). A loaded
// kernel takes the algorithm when the configuration and opt dims are its own and cuDNN accepts it within the
// workspace; it runs it for inputs of exactly those dims, cuDNN's heuristic first choice for any other dims.
// Anything else (malformed, foreign, refused) falls back to the heuristic: a plan never fails to load over
// it.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/engine/layers.h"

namespace kiln::engine::cuda {

/// The format version of the convolution plan data.
constexpr uint32_t kConvPlanDataVersion = 1;

/// The algorithm a convolution kernel tuned at build, with what it was tuned for.
struct ConvPlanData {
  int64_t dtype = 0;  // DType code of x, w, y
  int64_t layout =
      0;             // 0: NCHW tensors and KCRS weights; 1: NHWC tensors and KRSC weights; 2: as 1, graph API
  int64_t tf32 = 0;  // 1: the TF32 tactic (tensor-op math allowed for fp32)
  int64_t algo = 0;  // cudnnConvolutionFwdAlgo_t
  int64_t math = 0;  // cudnnMathType_t the algorithm runs with
  Dims input;        // x's dims at the opt shape (rank 3 to 5)
  bool operator==(const ConvPlanData&) const = default;
};

std::vector<uint8_t> encode_conv_plan_data(const ConvPlanData& data);
/// Parses plan data; false with `why` set when the bytes are not a well-formed blob of this version (dims
/// negative, rank outside 3..5, algorithm or math type negative or beyond `max_algo` / `max_math`).
bool decode_conv_plan_data(const std::vector<uint8_t>& bytes, int64_t max_algo, int64_t max_math,
                           ConvPlanData* data, std::string* why);

/// Process-wide counts of what convolution kernels did (for tests and logs).
struct ConvStats {
  int64_t tuned = 0;          // kernels that timed cuDNN's algorithms at creation
  int64_t stored = 0;         // kernels that use an algorithm from plan data
  int64_t rejected = 0;       // kernels whose plan data was malformed, foreign or refused by cuDNN
  int64_t fused_plans = 0;    // per-context shape plans that run one cudnnConvolutionBiasActivationForward
  int64_t unfused_plans = 0;  // per-context shape plans of NHWC kernels with a fusable chain that do not
  int64_t fused_refused = 0;  // fused calls cuDNN refused (the plan falls back to convolution + post-op pass)
  int64_t graph_plans =
      0;  // cuDNN graph API execution plans finalized (cudnn_graph; each may compile a kernel)
};
ConvStats conv_stats();
enum class ConvEvent { Tuned, Stored, Rejected, FusedPlan, UnfusedPlan, FusedRefused, GraphPlan };
/// Counts one event in conv_stats().
void count_conv_event(ConvEvent event);

}  // namespace kiln::engine::cuda
