// Pooling (max / average, ceil mode, count_include_pad, adaptive; planar or channels-last, where consecutive
// threads take consecutive channels of one position, so loads coalesce).

#include <cmath>

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/spatial/spatial_launch.h"

namespace kiln::engine::cuda {
namespace {

__global__ void pool_kernel(const void* in, void* out, int dtype, int64_t planes, PoolParams p, int64_t n) {
  int64_t in_sp = p.in[0] * p.in[1] * p.in[2], out_sp = p.out[0] * p.out[1] * p.out[2];
  // Channels-last: output element i is (image, position, channel) with the channel innermost, and a window
  // element lies `channels` apart from the next; planar: (plane, position), window elements adjacent.
  const int64_t cs = p.channels > 0 ? p.channels : 1;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t ch = i % cs, q = i / cs;
    int64_t pl = q / out_sp, o = q % out_sp;
    int64_t oc[3] = {o / (p.out[1] * p.out[2]), (o / p.out[2]) % p.out[1], o % p.out[2]};
    int64_t lo[3], hi[3], step[3], pool_size = 1;
    for (int d = 0; d < 3; ++d) {
      if (p.adaptive) {
        lo[d] = oc[d] * p.in[d] / p.out[d];
        hi[d] = ((oc[d] + 1) * p.in[d] + p.out[d] - 1) / p.out[d];
        step[d] = 1;
      } else {
        int64_t s = oc[d] * p.stride[d] - p.pad[d];
        int64_t end = s + (p.win[d] - 1) * p.dil[d] + 1;
        if (end > p.in[d] + p.pad[d]) end = p.in[d] + p.pad[d];
        if (p.kind == 1) pool_size *= end - s;
        lo[d] = s;
        hi[d] = end < p.in[d] ? end : p.in[d];
        step[d] = p.dil[d];
        while (lo[d] < 0) lo[d] += p.dil[d];
      }
    }
    float acc = p.kind == 0 ? -INFINITY : 0.0f;
    int64_t count = 0;
    const int64_t base = pl * in_sp * cs + ch;
    for (int64_t a = lo[0]; a < hi[0]; a += step[0])
      for (int64_t b = lo[1]; b < hi[1]; b += step[1])
        for (int64_t c = lo[2]; c < hi[2]; c += step[2]) {
          float v = load_as<float>(in, dtype, base + ((a * p.in[1] + b) * p.in[2] + c) * cs);
          if (p.kind == 0)
            acc = (isnan(v) || v > acc) ? v : acc;
          else
            acc += v;
          ++count;
        }
    if (p.kind == 1) {
      int64_t div = (!p.adaptive && p.count_include_pad) ? pool_size : count;
      acc = div > 0 ? acc / static_cast<float>(div) : 0.0f;
    }
    store_as<float>(out, dtype, i, acc);
  }
}

}  // namespace

void launch_pool(const void* in, void* out, int dtype, int64_t planes, const PoolParams& p, Stream stream) {
  int64_t n = planes * p.out[0] * p.out[1] * p.out[2] * (p.channels > 0 ? p.channels : 1);
  if (n == 0) return;
  pool_kernel<<<grid_for(n, 256), 256, 0, stream>>>(in, out, dtype, planes, p, n);
}

}  // namespace kiln::engine::cuda
