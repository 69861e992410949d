// Cumulative sum/prod/max/min along one axis, accumulated in double like the CPU reference. Short rows: one
// thread walks each row in order (the reference's exact sequence of operations). Long rows: one block per
// row; each thread folds a contiguous chunk, thread 0 turns the chunk totals into chunk prefixes in order,
// then each thread walks its chunk again from its prefix. Max and min are exact either way; sums and products
// of long rows associate differently from the reference, in double (differences far below the stored dtype's
// precision).

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/reduction/reduction_launch.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kBlockThreads = 256;
constexpr int64_t kMaxThreadRow = 256;  // rows up to this long: one thread per row

/// The reference's step: acc + v, acc * v, max, min (a NaN propagates through max and min from where it
/// appears, as in torch.cummax).
__device__ __forceinline__ double combine(int op, double acc, double v) {
  switch (op) {
    case 0: return acc + v;
    case 1: return acc * v;
    case 2: return isnan(v) || v > acc ? v : acc;
    default: return isnan(v) || v < acc ? v : acc;
  }
}

__device__ __forceinline__ double initial(int op) {
  const double inf = __longlong_as_double(0x7ff0000000000000LL);
  return op == 0 ? 0.0 : op == 1 ? 1.0 : op == 2 ? -inf : inf;
}

struct Walk {
  int64_t outer, n, inner;
  int op;
  bool exclusive, reverse;
  /// Element offset of step t of row `row`.
  __device__ int64_t at(int64_t row, int64_t t) const {
    int64_t o = row / inner, i = row % inner, j = reverse ? n - 1 - t : t;
    return (o * n + j) * inner + i;
  }
};

__global__ void cumulative_row_kernel(const void* in, void* out, int dtype, Walk w) {
  const int64_t rows = w.outer * w.inner;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double acc = initial(w.op);
    for (int64_t t = 0; t < w.n; ++t) {
      int64_t at = w.at(row, t);
      double next = combine(w.op, acc, load_as<double>(in, dtype, at));
      store_double(out, dtype, at, w.exclusive ? acc : next);
      acc = next;
    }
  }
}

__global__ void cumulative_block_kernel(const void* in, void* out, int dtype, Walk w) {
  __shared__ double prefix[kBlockThreads];
  const int64_t rows = w.outer * w.inner;
  const int64_t chunk = (w.n + blockDim.x - 1) / blockDim.x;
  const int64_t t0 = threadIdx.x * chunk, t1 = min(w.n, t0 + chunk);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    double acc = initial(w.op);
    for (int64_t t = t0; t < t1; ++t) acc = combine(w.op, acc, load_as<double>(in, dtype, w.at(row, t)));
    prefix[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
      double run = initial(w.op);
      for (unsigned s = 0; s < blockDim.x; ++s) {
        double total = prefix[s];
        prefix[s] = run;
        run = combine(w.op, run, total);
      }
    }
    __syncthreads();
    acc = prefix[threadIdx.x];
    for (int64_t t = t0; t < t1; ++t) {
      int64_t at = w.at(row, t);
      double next = combine(w.op, acc, load_as<double>(in, dtype, at));
      store_double(out, dtype, at, w.exclusive ? acc : next);
      acc = next;
    }
    __syncthreads();  // the next row reuses prefix[]
  }
}

}  // namespace

void launch_cumulative(const void* in, void* out, int dtype, int64_t outer, int64_t n, int64_t inner, int op,
                       bool exclusive, bool reverse, Stream stream) {
  const int64_t rows = outer * inner;
  if (rows == 0 || n == 0) return;
  Walk w{outer, n, inner, op, exclusive, reverse};
  if (n <= kMaxThreadRow) {
    cumulative_row_kernel<<<grid_for(rows, kBlockThreads), kBlockThreads, 0, stream>>>(in, out, dtype, w);
  } else {
    cumulative_block_kernel<<<grid_for(rows, 1), kBlockThreads, 0, stream>>>(in, out, dtype, w);
  }
}

}  // namespace kiln::engine::cuda
