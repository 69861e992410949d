#pragma once
// Launch functions of the reduction kernels (reduction.cu, topk.cu, cumulative.cu), shared by nvcc and g++
// (launch.h says how).

#include <cstdint>

#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

// ---- Reductions (reduction.cu) ----

/// Reduce: for every output element (an index over `kept`, input strides kept_st), reduce over `red`
/// (input strides red_st). op = ReduceOp. Arg ops write Int64 indices along the (single) reduced dim.
void launch_reduce(const void* in, int in_dtype, const Shape& kept, const int64_t* kept_st, const Shape& red,
                   const int64_t* red_st, void* out, int out_dtype, int op, Stream stream);

/// Reduce (op = ReduceOp, not the arg ops) over each of `rows` contiguous rows of n elements; out is [rows].
/// Sum, mean, max and min of fp32 / fp16 / bf16 rows of up to 16384 elements, with the output in the input's
/// dtype, take the fast path of norm_softmax.h (a row per warp or per block, fp32 accumulation); the rest is
/// launch_reduce's.
void launch_reduce_rows(const void* in, int in_dtype, int64_t rows, int64_t n, void* out, int out_dtype,
                        int op, Stream stream);

/// Reduce (op = ReduceOp, not the arg ops) over the middle dim of `in` viewed as [outer, mid, inner], inner
/// > 1; out is [outer, inner]. Accumulates in double, as launch_reduce.
void launch_reduce_middle(const void* in, int in_dtype, int64_t outer, int64_t mid, int64_t inner, void* out,
                          int out_dtype, int op, Stream stream);

/// Softmax over rows: input viewed as [outer, n, inner], one row per (outer, inner).
void launch_softmax(const void* in, void* out, int dtype, int64_t outer, int64_t n, int64_t inner, bool log,
                    Stream stream);

/// Normalization over rows of `row_len` contiguous elements; `rows` rows. The affine parameter index of
/// element j of row r: layer norm (groups == 0): j; group norm: (r % groups) * group_channels + j / spatial.
/// scale/bias are fp32 device arrays or null. `rms` (groups == 0 only): RMS norm, no centring.
void launch_norm(const void* in, void* out, int dtype, int64_t rows, int64_t row_len, int64_t groups,
                 int64_t group_channels, int64_t spatial, const float* scale, const float* bias,
                 float epsilon, bool rms, Stream stream);

// ---- TopK (topk.cu) ----

/// Top k along the middle dim of `in` viewed as [outer, n, inner]: values (same dtype, copied exactly) and
/// Int64 indices, each [outer, k, inner]. Order: by value (largest or smallest first), ties by lower index;
/// NaN counts as larger than every number (first when largest, last when smallest). n must be < 2^31.
void launch_topk(const void* in, int dtype, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest,
                 void* values, long long* indices, Stream stream);

// ---- Cumulative (cumulative.cu) ----

/// Cumulative sum/prod/max/min (op = CumulativeParams::Op) along the middle dim of [outer, n, inner],
/// optionally exclusive and/or reversed; accumulates in double and stores each output as the reference
/// stores.
void launch_cumulative(const void* in, void* out, int dtype, int64_t outer, int64_t n, int64_t inner, int op,
                       bool exclusive, bool reverse, Stream stream);

}  // namespace kiln::engine::cuda
