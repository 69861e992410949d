#pragma once
// How a MatrixMultiply becomes cuBLASLt calls (tactics "cublaslt", "cublaslt_tf32", "cublaslt_fp8"), and what
// the plan stores of the algorithm the builder tuned for them. Plain C++ (no CUDA headers): unit-tested
// without a GPU.
//
// Calls: the output's batch dims broadcast over the operands'. When both operands step by a constant stride
// per output matrix it is one strided-batched call, and a batch of rows against one right operand (a linear
// layer) is one call over nb * m rows; otherwise one call per output matrix. Each call is keyed by its shape,
// strides and the alignment of its pointers (MatmulCallKey): the per-context cuBLASLt plans are cached per
// key.
//
// Plan data (Kernel::plan_data, a fixed-size little-endian blob, version kMatmulPlanDataVersion): the key of
// the call at the layer's opt shape with 256-byte aligned buffers, the layer's configuration (dtype, compute
// mode, transposes, epilogue) and cuBLASLt's opaque algorithm (cublasLtMatmulAlgo_t: 8 x uint64) that ran
// fastest there. A loaded kernel takes it when the key and configuration are its own and cuBLASLt accepts the
// algorithm (cublasLtMatmulAlgoCheck), and runs it for calls of that shape whose pointers are aligned as the
// algorithm needs; other calls (and every call when it was refused) get cuBLASLt's first heuristic choice.

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/engine/layers.h"

namespace kiln::engine::cuda {

/// One cuBLASLt call of a matmul kernel: what selects its per-context plan.
struct MatmulCallKey {
  int64_t m = 0, n = 0, k = 0;  // rows of the call's output (nb * m when flattened), columns, reduced dim
  int64_t count = 1;            // matrices in the strided batch
  int64_t stride_a = 0, stride_b = 0;  // elements between consecutive a / b matrices (0 when count == 1)
  int64_t align = 0;  // the smallest alignment of the a, b and output pointers, bytes (<= 256)
  auto operator<=>(const MatmulCallKey&) const = default;
};

/// The cuBLASLt calls of one matmul at concrete dims.
struct MatmulCalls {
  int64_t m = 0, n = 0, k = 0;              // of one output matrix
  int64_t batches = 0;                      // output matrices (product of the output's batch dims)
  std::vector<int64_t> offset_a, offset_b;  // per output matrix: element offset of its a / b matrix
  /// True: one call per output matrix (call.count == 1), at offset_a[i], offset_b[i] and output i * m * n.
  /// False: one call at offset_a[0], offset_b[0] and the output's start.
  bool per_matrix = false;
  MatmulCallKey call;  // the call (align 0: it depends on the pointers)
};

/// The calls of a matmul with `params` over a, b (b: the weight's dims when it is one) giving y.
MatmulCalls matmul_calls(const MatrixMultiplyParams& params, const Dims& a, const Dims& b, const Dims& y);

/// The smallest power of two <= 256 that divides the address `p`.
int pointer_alignment(uintptr_t p);

/// The format version of the matmul plan data.
constexpr uint32_t kMatmulPlanDataVersion = 1;

/// What a matmul kernel records in the plan: the tuned call and the algorithm chosen for it.
struct MatmulPlanData {
  MatmulCallKey call;
  // The kernel's configuration the algorithm was chosen for.
  int64_t dtype = 0;  // DType code of every operand
  int64_t compute =
      0;  // 0 CUBLAS_COMPUTE_32F, 1 CUBLAS_COMPUTE_32F_FAST_TF32, 2 FP8 E4M3 operands, 3 and output
  int64_t transpose_a = 0, transpose_b = 0;
  int64_t epilogue = 0;            // cublasLtEpilogue_t
  std::array<uint64_t, 8> algo{};  // cublasLtMatmulAlgo_t::data
  bool operator==(const MatmulPlanData&) const = default;
};

std::vector<uint8_t> encode_matmul_plan_data(const MatmulPlanData& data);
/// Parses plan data; false with `why` set when the bytes are not a well-formed blob of this version (the
/// kernel then falls back to the heuristic: a plan never fails to load over it).
bool decode_matmul_plan_data(const std::vector<uint8_t>& bytes, MatmulPlanData* data, std::string* why);

/// Process-wide counts of what matmul kernels did with tuning (for tests and logs).
struct MatmulTuningStats {
  int64_t tuned = 0;     // kernels that timed heuristic candidates at creation
  int64_t stored = 0;    // kernels that use an algorithm from plan data
  int64_t rejected = 0;  // kernels whose plan data was malformed, foreign or refused by cuBLASLt
  int64_t used = 0;      // per-context call plans made with a tuned or stored algorithm (at run time)
};
MatmulTuningStats matmul_tuning_stats();

}  // namespace kiln::engine::cuda
