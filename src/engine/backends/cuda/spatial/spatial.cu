// Spatial kernels: pooling (max / average, ceil mode, count_include_pad, adaptive; planar or channels-last,
// where consecutive threads take consecutive channels of one position, so loads coalesce) and a plain
// attention kernel (one block per query row, scores in shared memory; operands dense or strided views,
// AttnRows).

#include <cmath>

#include "engine/backends/cuda/device_util.cuh"

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

constexpr int kAttnThreads = 128;

__global__ void attention_kernel(const void* q, const void* k, const void* v, const void* mask, void* out,
                                 int dtype, AttnParams p) {
  extern __shared__ float scores[];
  __shared__ float scratch[kAttnThreads];
  for (int64_t row = blockIdx.x; row < p.batch * p.lq; row += gridDim.x) {
    int64_t b = row / p.lq, i = row % p.lq;
    int64_t mbase = 0;
    if (p.mask_kind) {
      int64_t rem = b;
      for (int d = p.batch_shape.rank - 1; d >= 0; --d) {
        mbase += (rem % p.batch_shape.d[d]) * p.mask_st[d];
        rem /= p.batch_shape.d[d];
      }
      mbase += i * p.mask_st[p.batch_shape.rank];
    }
    const AttnRows &rq = p.rows[0], &rk = p.rows[1], &rv = p.rows[2], &ro = p.rows[3];
    const int64_t qo = rq.start(b) + i * rq.row, ko = rk.start(b), vo = rv.start(b),
                  oo = ro.start(b) + i * ro.row;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < p.lk; j += blockDim.x) {
      float s = 0;
      for (int64_t c = 0; c < p.e; ++c)
        s += load_as<float>(q, dtype, qo + c) * load_as<float>(k, dtype, ko + j * rk.row + c);
      s *= p.scale;
      if (p.causal && j > i) s = -INFINITY;
      if (p.mask_kind) {
        int64_t mi = mbase + j * p.mask_st[p.batch_shape.rank + 1];
        if (p.mask_kind == 1) {
          if (!static_cast<const unsigned char*>(mask)[mi]) s = -INFINITY;
        } else {
          s += load_as<float>(mask, p.mask_dtype, mi);
        }
      }
      scores[j] = s;
      mx = fmaxf(mx, s);
    }
    mx = block_reduce(mx, true, scratch);
    float sum = 0;
    for (int64_t j = threadIdx.x; j < p.lk; j += blockDim.x) {
      float e = mx == -INFINITY ? 0.0f : expf(scores[j] - mx);
      scores[j] = e;
      sum += e;
    }
    sum = block_reduce(sum, false, scratch);
    for (int64_t c = threadIdx.x; c < p.ev; c += blockDim.x) {
      float acc = 0;
      for (int64_t j = 0; j < p.lk; ++j) acc += scores[j] * load_as<float>(v, dtype, vo + j * rv.row + c);
      store_as<float>(out, dtype, oo + c, sum > 0 ? acc / sum : NAN);
    }
    __syncthreads();
  }
}

}  // namespace

void launch_pool(const void* in, void* out, int dtype, int64_t planes, const PoolParams& p, Stream stream) {
  int64_t n = planes * p.out[0] * p.out[1] * p.out[2] * (p.channels > 0 ? p.channels : 1);
  if (n == 0) return;
  pool_kernel<<<grid_for(n, 256), 256, 0, stream>>>(in, out, dtype, planes, p, n);
}

void launch_attention(const void* q, const void* k, const void* v, const void* mask, void* out, int dtype,
                      const AttnParams& p, Stream stream) {
  int64_t rows = p.batch * p.lq;
  if (rows == 0 || p.ev == 0) return;
  size_t smem = static_cast<size_t>(p.lk) * sizeof(float);
  if (smem > 48 * 1024)
    cudaFuncSetAttribute(attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(smem));
  unsigned blocks = static_cast<unsigned>(rows > (1 << 20) ? (1 << 20) : rows);
  attention_kernel<<<blocks, kAttnThreads, smem, stream>>>(q, k, v, mask, out, dtype, p);
}

}  // namespace kiln::engine::cuda
