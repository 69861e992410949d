// Scatter (torch.scatter / scatter_add along an axis), with the CPU reference's answer for duplicate targets:
// without reduction the last index element in row-major order wins (two passes: the largest element number
// per target through atomicMax, then only that element writes); with Add, one thread walks each index column
// along the axis in order (columns never share targets), so every sum is the reference's sequence of
// additions.

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/movement/movement_launch.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ int64_t load_index(const void* idx, int dt, int64_t i) {
  return dt == kI32 ? static_cast<const int*>(idx)[i] : static_cast<const long long*>(idx)[i];
}

/// Offset into the output of index element e, or -1 when its index is out of range.
__device__ __forceinline__ int64_t target_of(int64_t e, const Shape& out_shape, const Shape& idx_shape,
                                             int axis, const void* idx, int idx_dtype) {
  int64_t rem = e, off = 0, stride = 1;
  for (int d = idx_shape.rank - 1; d >= 0; --d) {
    int64_t c = rem % idx_shape.d[d];
    rem /= idx_shape.d[d];
    if (d == axis) {
      c = load_index(idx, idx_dtype, e);
      if (c < 0) c += out_shape.d[d];
      if (c < 0 || c >= out_shape.d[d]) return -1;
    }
    off += c * stride;
    stride *= out_shape.d[d];
  }
  return off;
}

__global__ void scatter_claim_kernel(unsigned long long* winners, Shape out_shape, Shape idx_shape, int axis,
                                     const void* idx, int idx_dtype, int64_t n) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t t = target_of(e, out_shape, idx_shape, axis, idx, idx_dtype);
    if (t >= 0) atomicMax(&winners[t], static_cast<unsigned long long>(e) + 1);
  }
}

template <typename E>
__global__ void scatter_write_kernel(E* out, const E* upd, const unsigned long long* winners, Shape out_shape,
                                     Shape idx_shape, int axis, const void* idx, int idx_dtype, int64_t n) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t t = target_of(e, out_shape, idx_shape, axis, idx, idx_dtype);
    if (t >= 0 && winners[t] == static_cast<unsigned long long>(e) + 1) out[t] = upd[e];
  }
}

/// One thread per index column: the index elements that differ only in the axis coordinate, in axis order.
__global__ void scatter_add_kernel(void* out, int dtype, const void* upd, Shape out_shape, Shape idx_shape,
                                   int axis, const void* idx, int idx_dtype, int64_t columns) {
  int64_t len = idx_shape.d[axis];
  int64_t idx_axis_stride = 1, out_axis_stride = 1;
  for (int d = idx_shape.rank - 1; d > axis; --d) {
    idx_axis_stride *= idx_shape.d[d];
    out_axis_stride *= out_shape.d[d];
  }
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // The column's first index element and its output base (axis coordinate 0 in both).
    int64_t rem = c, ibase = 0, obase = 0, istride = 1, ostride = 1;
    for (int d = idx_shape.rank - 1; d >= 0; --d) {
      if (d != axis) {
        int64_t v = rem % idx_shape.d[d];
        rem /= idx_shape.d[d];
        ibase += v * istride;
        obase += v * ostride;
      }
      istride *= idx_shape.d[d];
      ostride *= out_shape.d[d];
    }
    for (int64_t j = 0; j < len; ++j) {
      int64_t e = ibase + j * idx_axis_stride;
      int64_t t = load_index(idx, idx_dtype, e);
      if (t < 0) t += out_shape.d[axis];
      if (t < 0 || t >= out_shape.d[axis]) continue;
      int64_t o = obase + t * out_axis_stride;
      store_double(out, dtype, o, load_as<double>(out, dtype, o) + load_as<double>(upd, dtype, e));
    }
  }
}

int elem_size(int dtype) {
  switch (dtype) {
    case kF64:
    case kI64: return 8;
    case kF32:
    case kI32: return 4;
    case kF16:
    case kBF16:
    case kI16: return 2;
    default: return 1;
  }
}

}  // namespace

void launch_scatter(void* out, const Shape& out_shape, int dtype, const void* idx, int idx_dtype,
                    const Shape& idx_shape, const void* upd, int axis, int reduction,
                    unsigned long long* winners, Stream stream) {
  int64_t n = shape_numel(idx_shape);
  if (n == 0 || shape_numel(out_shape) == 0) return;
  if (reduction == 1) {
    int64_t columns = n / idx_shape.d[axis];
    scatter_add_kernel<<<grid_for(columns, kThreads), kThreads, 0, stream>>>(
        out, dtype, upd, out_shape, idx_shape, axis, idx, idx_dtype, columns);
    return;
  }
  size_t winner_bytes = static_cast<size_t>(shape_numel(out_shape)) * sizeof(unsigned long long);
  if (cudaMemsetAsync(winners, 0, winner_bytes, stream) != cudaSuccess) return;  // reported by check_launch
  scatter_claim_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(winners, out_shape, idx_shape, axis,
                                                                       idx, idx_dtype, n);
  auto write = [&](auto* tag) {
    using E = std::remove_pointer_t<decltype(tag)>;
    scatter_write_kernel<E><<<grid_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<E*>(out), static_cast<const E*>(upd), winners, out_shape, idx_shape, axis, idx, idx_dtype,
        n);
  };
  switch (elem_size(dtype)) {
    case 1: write(static_cast<unsigned char*>(nullptr)); break;
    case 2: write(static_cast<unsigned short*>(nullptr)); break;
    case 4: write(static_cast<unsigned int*>(nullptr)); break;
    default: write(static_cast<unsigned long long*>(nullptr)); break;
  }
}

}  // namespace kiln::engine::cuda
