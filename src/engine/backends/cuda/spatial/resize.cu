// Resize (nearest, (bi/tri)linear, align_corners) over up to 3 trailing spatial dims, one thread per output
// element. Source coordinates, weights and sums are doubles computed in the reference's order with explicitly
// rounded operations (__dmul_rn, __dadd_rn: no fused multiply-add), so floor() picks the same source index as
// the CPU and the result, stored through float as the reference stores it, is the same.

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/spatial/spatial_launch.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void resize_kernel(const void* in, void* out, int dtype, ResizeArgs a, int64_t n) {
  const int64_t in_plane = a.in[0] * a.in[1] * a.in[2], out_plane = a.out[0] * a.out[1] * a.out[2];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t pl = i / out_plane, o = i % out_plane;
    int64_t oc[3] = {o / (a.out[1] * a.out[2]), (o / a.out[2]) % a.out[1], o % a.out[2]};
    int64_t i0[3], i1[3];
    double w1[3];
    for (int d = 0; d < 3; ++d) {
      double c = static_cast<double>(oc[d]);
      if (a.mode == 0) {
        i0[d] = i1[d] = min(static_cast<int64_t>(floor(__dmul_rn(c, a.scale[d]))), a.in[d] - 1);
        w1[d] = 0;
        continue;
      }
      double src;
      if (a.align_corners) {
        src = a.out[d] > 1
                  ? __dmul_rn(c, static_cast<double>(a.in[d] - 1)) / static_cast<double>(a.out[d] - 1)
                  : 0.0;
      } else {
        src = fmax(__dadd_rn(__dmul_rn(__dadd_rn(c, 0.5), a.scale[d]), -0.5), 0.0);
      }
      i0[d] = min(static_cast<int64_t>(floor(src)), a.in[d] - 1);
      i1[d] = min(i0[d] + 1, a.in[d] - 1);
      w1[d] = src - static_cast<double>(i0[d]);
    }
    const int64_t base = pl * in_plane;
    double acc = 0;
    for (int corner = 0; corner < 8; ++corner) {
      double w = 1;
      int64_t idx[3];
      for (int d = 0; d < 3; ++d) {
        bool hi = (corner >> d) & 1;
        w = __dmul_rn(w, hi ? w1[d] : 1.0 - w1[d]);
        idx[d] = hi ? i1[d] : i0[d];
      }
      if (w != 0) {
        double v = load_as<double>(in, dtype, base + (idx[0] * a.in[1] + idx[1]) * a.in[2] + idx[2]);
        acc = __dadd_rn(acc, __dmul_rn(w, v));
      }
    }
    store_double(out, dtype, i, acc);
  }
}

}  // namespace

void launch_resize(const void* in, void* out, int dtype, const ResizeArgs& a, Stream stream) {
  int64_t n = a.planes * a.out[0] * a.out[1] * a.out[2];
  if (n == 0) return;
  resize_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(in, out, dtype, a, n);
}

}  // namespace kiln::engine::cuda
