#pragma once
// Fast paths of layer norm, softmax / log-softmax and reduce (sum, mean, max, min) over contiguous rows
// (norm_softmax.cu), taken by launch_norm (groups == 0), launch_softmax (inner == 1) and launch_reduce_rows
// in reduction.cu before their generic kernels.
//
// The element type is a template parameter (fp32, fp16, bf16), math is fp32 and each row stays in registers
// between its passes (mean, then the variance of x - mean, then the output; max, then the sum of exp, then
// the output), so global memory is read once and written once. Rows of up to kWarpRowMax elements take a
// group of 8, 16 or 32 lanes of one warp (several rows per block, shuffle reductions); rows of up to
// kBlockRowMax take a whole block (shuffles, then one shared-memory step across warps); longer rows take the
// generic kernel. Loads and stores are 16 bytes wide when every pointer is 16-byte aligned and the row length
// is a multiple of the vector, else one element each. Like this header's callers, it includes nothing of Kiln
// but launch.h.

#include <cstdint>

#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

/// Longest rows of the warp path and of the block path (32 elements per thread: 32 lanes, 512 threads).
constexpr int64_t kWarpRowMax = 1024, kBlockRowMax = 16384;
/// Threads per block of the warp path; most threads per block of the block path.
constexpr int kRowWarpBlock = 128, kRowBlockMaxThreads = 512;

/// How the rows of one launch are processed.
enum class RowPath : uint8_t { Warp, Block, Generic };

struct RowPlan {
  RowPath path = RowPath::Generic;
  int vec = 1;      // elements per load and store: 16 / element size (vectorized) or 1
  int items = 1;    // vectors per thread: 1, or 32 / vec (every thread holds up to 32 elements)
  int lanes = 32;   // warp path: lanes per row (8, 16, 32)
  int threads = 0;  // block path: threads per block (a multiple of 32, <= kRowBlockMaxThreads)
};

/// The path for rows of `row_len` elements of `elem_size` (2 or 4) bytes; `aligned`: every pointer the kernel
/// reads or writes (input, output, scale, bias) is 16-byte aligned.
inline RowPlan plan_rows(int64_t row_len, int elem_size, bool aligned) {
  RowPlan p;
  int full = 16 / elem_size;
  p.vec = aligned && row_len % full == 0 ? full : 1;
  int64_t nvec = row_len / p.vec;
  int max_items = 32 / p.vec;
  if (row_len < 1 || row_len > kBlockRowMax) return p;
  if (row_len <= kWarpRowMax) {
    p.path = RowPath::Warp;
    if (nvec <= 32) {
      p.items = 1;
      p.lanes = nvec <= 8 ? 8 : nvec <= 16 ? 16 : 32;
    } else {
      p.items = max_items;
    }
    return p;
  }
  p.path = RowPath::Block;
  p.items = max_items;
  int64_t threads = (nvec + max_items - 1) / max_items;
  p.threads = static_cast<int>((threads + 31) / 32 * 32);
  return p;
}

/// Layer norm of `rows` rows of `row_len` elements (dtype kF32, kF16 or kBF16), scale/bias fp32 device arrays
/// of row_len or null: y = (x - mean) * rsqrt(var + epsilon) * scale + bias (`rms`: RMS norm, the mean taken
/// as 0, so var is the mean of squares), and its E4M3 `copy` (rows x row_len bytes) when asked (a format
/// copy, Layer::format_copies). Returns false, launching nothing, when the rows need the generic kernel
/// (another dtype, rows longer than kBlockRowMax).
bool launch_layer_norm_fast(const void* in, void* out, int dtype, int64_t rows, int64_t row_len,
                            const float* scale, const float* bias, float epsilon, bool rms, Stream stream,
                            E4m3Out copy = {});

/// Softmax (or log-softmax when `log`) over each of `rows` contiguous rows of `row_len` elements. Returns
/// false, launching nothing, where launch_layer_norm_fast would.
bool launch_softmax_fast(const void* in, void* out, int dtype, int64_t rows, int64_t row_len, bool log,
                         Stream stream);

/// The reductions of launch_reduce_rows_fast (the values of ReduceOp's first four).
enum RowReduce : int { kRowSum = 0, kRowMean = 1, kRowMax = 2, kRowMin = 3 };

/// One value per row of `rows` contiguous rows of `row_len` elements: their sum, mean, max or min (op, a
/// RowReduce; max and min give NaN for a row with a NaN), accumulated in fp32 and stored in the input's
/// dtype. Returns false, launching nothing, for another op, or where launch_layer_norm_fast would.
bool launch_reduce_rows_fast(const void* in, void* out, int dtype, int64_t rows, int64_t row_len, int op,
                             Stream stream);

}  // namespace kiln::engine::cuda
