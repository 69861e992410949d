// The generic attention kernel: one block per query row, scores in shared memory; operands dense or strided
// views (AttnRows).

#include <cmath>

#include "engine/backends/cuda/attention/attention_launch.h"
#include "engine/backends/cuda/device_util.cuh"

namespace kiln::engine::cuda {
namespace {

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
      float e = scores[j] == -INFINITY ? 0.0f : expf(scores[j] - mx);  // masked: 0, NaN stays NaN
      scores[j] = e;
      sum += e;
    }
    sum = block_reduce(sum, false, scratch);
    for (int64_t c = threadIdx.x; c < p.ev; c += blockDim.x) {
      float acc = 0;
      for (int64_t j = 0; j < p.lk; ++j) acc += scores[j] * load_as<float>(v, dtype, vo + j * rv.row + c);
      // Every key masked: probabilities 0 (acc is 0 x v), as torch's safe softmax.
      store_as<float>(out, dtype, oo + c, sum == 0.0f ? acc : acc / sum);
    }
    __syncthreads();
  }
}

}  // namespace

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
