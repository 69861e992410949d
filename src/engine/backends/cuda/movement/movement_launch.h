#pragma once
// Launch functions of the movement kernels (movement.cu, strided_copy.cu, scatter.cu, fill.cu, nonzero.cu),
// shared by nvcc and g++ (launch.h says how).

#include <cstddef>
#include <cstdint>

#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

// ---- Data movement (movement.cu; the strided copy in strided_copy.cu) ----

/// For every index of `shape`: out[out_base + sum idx*out_st] = in[in_base + sum idx*in_st] (element strides,
/// may be negative or 0), elements of `elem_size` bytes (1, 2, 4, 8).
void launch_strided_copy(const void* in, int64_t in_base, const int64_t* in_st, void* out, int64_t out_base,
                         const int64_t* out_st, const Shape& shape, int elem_size, Stream stream);

/// Padding: out (shape `out_shape`) from in (shape `in_shape`) with pre[k] elements before each dim;
/// mode 0 constant (value: `fill` bytes of one element), 1 reflect, 2 replicate, 3 circular.
void launch_pad(const void* in, const Shape& in_shape, void* out, const Shape& out_shape, const int64_t* pre,
                int mode, uint64_t fill, int elem_size, Stream stream);

/// Gather along an axis. Default mode: data viewed as [outer, axis_len, inner], out as [outer, n_idx, inner].
/// Elements mode: out has the index tensor's shape `idx_shape`; data's dims `data_shape`.
/// Negative indices wrap; an index still out of range gives 0 (no host check during execution).
void launch_gather(const void* data, const void* idx, int idx_dtype, void* out, int64_t outer,
                   int64_t axis_len, int64_t inner, int64_t n_idx, int elem_size, Stream stream);
void launch_gather_elements(const void* data, const Shape& data_shape, const void* idx, int idx_dtype,
                            const Shape& idx_shape, int axis, void* out, int elem_size, Stream stream);

// ---- Scatter (scatter.cu) ----

/// torch.scatter / scatter_add along `axis` into `out`, which already holds the data (shape `out_shape`,
/// dtype `dtype`). Element e of the index tensor (shape `idx_shape`, also the updates' shape) targets the
/// output element at e's multi-index with the axis coordinate replaced by idx[e] (negative wraps; an index
/// still out of range is skipped: no host check during execution). reduction 0: the target becomes upd[e],
/// and of several e with one target the last in row-major order wins (as in the CPU reference's sequential
/// loop); `winners` is a workspace of numel(out_shape) uint64. reduction 1: out += upd[e] in double, rounded
/// to the dtype after each addition, in row-major order of e (one thread walks each index column along the
/// axis; `winners` is unused).
void launch_scatter(void* out, const Shape& out_shape, int dtype, const void* idx, int idx_dtype,
                    const Shape& idx_shape, const void* upd, int axis, int reduction,
                    unsigned long long* winners, Stream stream);

// ---- Fill (fill.cu) ----

/// out[i] for i < n: op 0 constant `start`; 1 arange start + i*delta; 2 linspace from start to `delta` (the
/// end) over n points. Computed in double and stored as the reference stores (integers saturate).
void launch_fill(void* out, int dtype, int64_t n, int op, double start, double delta, Stream stream);

// ---- NonZero (nonzero.cu) ----

/// Blocks of the nonzero kernels; the workspace holds kNonZeroBlocks + 1 int64 counters.
constexpr int kNonZeroBlocks = 1024;
/// Writes the multi-indices of the non-zero elements of `in` (shape `shape`, row-major order) as Int64 rows
/// of rank entries into `out`, and enqueues a copy of their count into `*host_count`: valid only after the
/// caller synchronizes the stream.
void launch_nonzero(const void* in, int dtype, const Shape& shape, long long* out, long long* workspace,
                    long long* host_count, Stream stream);

/// Copies `n` <= 1024 host bytes to `dst`, the bytes travelling as a kernel parameter (movement.cu), so the
/// host source may be released at once (Backend::copy of small host-to-device copies).
void launch_inline_copy(void* dst, const void* bytes, size_t n, Stream stream);

}  // namespace kiln::engine::cuda
