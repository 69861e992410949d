// Fill: constant, arange and linspace values computed in double in the reference's order (explicitly rounded
// operations, no fused multiply-add) and stored as the reference stores them.

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/movement/movement_launch.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void fill_kernel(void* out, int dtype, int64_t n, int op, double start, double delta) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double di = static_cast<double>(i), v = start;
    if (op == 1) {
      v = __dadd_rn(start, __dmul_rn(di, delta));
    } else if (op == 2 && n > 1) {
      v = __dadd_rn(start, __ddiv_rn(__dmul_rn(delta - start, di), static_cast<double>(n - 1)));
    }
    store_double(out, dtype, i, v);
  }
}

}  // namespace

void launch_fill(void* out, int dtype, int64_t n, int op, double start, double delta, Stream stream) {
  if (n <= 0) return;
  fill_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(out, dtype, n, op, start, delta);
}

}  // namespace kiln::engine::cuda
