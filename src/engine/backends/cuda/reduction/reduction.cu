// Reduction kernels of our own: reduce (every ReduceOp), softmax / log-softmax, layer / group norm. One
// block per output element or row, a shared-memory tree within the block; a reduction over the middle of
// [outer, mid, inner] has a kernel of its own that reads along inner. Softmax over the last dim and layer
// norm take the fast paths of norm_softmax.cu first; these generic kernels cover the rest (softmax over
// another dim, group / instance norm, rows too long for the fast paths).

#include <cmath>

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/reduction/norm_softmax.h"
#include "engine/backends/cuda/reduction/reduction_launch.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;
enum : int { rSum, rMean, rMax, rMin, rProd, rAny, rAll, rArgMax, rArgMin };

struct Strides {
  int64_t v[kMaxRank];
};

__device__ __forceinline__ int64_t offset_of(int64_t i, const Shape& s, const Strides& st) {
  int64_t off = 0;
  for (int k = s.rank - 1; k >= 0; --k) {
    off += (i % s.d[k]) * st.v[k];
    i /= s.d[k];
  }
  return off;
}

__device__ double combine(int op, double a, double b) {
  switch (op) {
    case rMax: return (isnan(a) || isnan(b)) ? NAN : fmax(a, b);
    case rMin: return (isnan(a) || isnan(b)) ? NAN : fmin(a, b);
    case rProd: return a * b;
    case rAny: return (a != 0 || b != 0) ? 1.0 : 0.0;
    case rAll: return (a != 0 && b != 0) ? 1.0 : 0.0;
    default: return a + b;
  }
}

__device__ double identity(int op) {
  switch (op) {
    case rMax: return -INFINITY;
    case rMin: return INFINITY;
    case rProd:
    case rAll: return 1.0;
    default: return 0.0;
  }
}

/// Whether candidate (bv, bi) beats (av, ai) for arg-max/min: NaN wins, then the better value, then the lower
/// index.
__device__ bool arg_better(bool is_max, double av, long long ai, double bv, long long bi) {
  bool an = isnan(av), bn = isnan(bv);
  if (an || bn) return an && bn ? bi < ai : bn;
  if (av == bv) return bi < ai;
  return is_max ? bv > av : bv < av;
}

__global__ void reduce_kernel(const void* in, int in_dtype, Shape kept, Strides kept_st, Shape red,
                              Strides red_st, void* out, int out_dtype, int op, int64_t n_out,
                              int64_t n_red) {
  __shared__ double sv[kThreads];
  __shared__ long long si[kThreads];
  bool arg = op == rArgMax || op == rArgMin;
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    int64_t base = offset_of(o, kept, kept_st);
    double acc = arg ? NAN : identity(op);
    long long ai = -1;
    for (int64_t r = threadIdx.x; r < n_red; r += blockDim.x) {
      double v = load_as<double>(in, in_dtype, base + offset_of(r, red, red_st));
      if (arg) {
        if (ai < 0 || arg_better(op == rArgMax, acc, ai, v, r)) {
          acc = v;
          ai = r;
        }
      } else {
        acc = combine(op, acc, v);
      }
    }
    sv[threadIdx.x] = acc;
    si[threadIdx.x] = ai;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) {
        if (arg) {
          long long bi = si[threadIdx.x + s];
          if (bi >= 0 && (si[threadIdx.x] < 0 || arg_better(op == rArgMax, sv[threadIdx.x], si[threadIdx.x],
                                                            sv[threadIdx.x + s], bi))) {
            sv[threadIdx.x] = sv[threadIdx.x + s];
            si[threadIdx.x] = bi;
          }
        } else {
          sv[threadIdx.x] = combine(op, sv[threadIdx.x], sv[threadIdx.x + s]);
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      double v = sv[0];
      if (op == rMean) v /= static_cast<double>(n_red);
      if (arg) v = static_cast<double>(si[0] < 0 ? 0 : si[0]);
      store_as<double>(out, out_dtype, o, v);
    }
    __syncthreads();
  }
}

/// Reduce over the middle of [outer, mid, inner] (inner > 1): a block of kMidCols x kMidRows threads per
/// kMidCols inner elements of one outer index; each thread combines every kMidRows-th middle element, so a
/// warp reads kMidCols consecutive elements (a channels-last [N, H*W, C] spatial mean reads coalesced), then
/// the rows are combined in shared memory.
constexpr int kMidCols = 32, kMidRows = 16;
__global__ void reduce_middle_kernel(const void* in, int in_dtype, int64_t outer, int64_t mid, int64_t inner,
                                     void* out, int out_dtype, int op) {
  __shared__ double part[kMidRows][kMidCols + 1];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kMidCols + threadIdx.x;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    double acc = identity(op);
    if (c < inner) {
      for (int64_t m = threadIdx.y; m < mid; m += kMidRows)
        acc = combine(op, acc, load_as<double>(in, in_dtype, (o * mid + m) * inner + c));
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < inner) {
      double v = part[0][threadIdx.x];
      for (int r = 1; r < kMidRows; ++r) v = combine(op, v, part[r][threadIdx.x]);
      if (op == rMean) v /= static_cast<double>(mid);
      store_as<double>(out, out_dtype, o * inner + c, v);
    }
    __syncthreads();
  }
}

__global__ void softmax_kernel(const void* in, void* out, int dtype, int64_t outer, int64_t n, int64_t inner,
                               bool log) {
  __shared__ float scratch[kThreads];
  for (int64_t row = blockIdx.x; row < outer * inner; row += gridDim.x) {
    int64_t base = (row / inner) * n * inner + row % inner;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      mx = fmaxf(mx, load_as<float>(in, dtype, base + j * inner));
    mx = block_reduce(mx, true, scratch);
    float sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      sum += expf(load_as<float>(in, dtype, base + j * inner) - mx);
    sum = block_reduce(sum, false, scratch);
    float lse = logf(sum);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      float x = load_as<float>(in, dtype, base + j * inner) - mx;
      store_as<float>(out, dtype, base + j * inner, log ? x - lse : expf(x) / sum);
    }
  }
}

__global__ void norm_kernel(const void* in, void* out, int dtype, int64_t rows, int64_t row_len,
                            int64_t groups, int64_t group_channels, int64_t spatial, const float* scale,
                            const float* bias, float epsilon, bool rms) {
  __shared__ float scratch[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    int64_t base = r * row_len;
    float mean = 0;
    if (!rms) {
      float sum = 0;
      for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) sum += load_as<float>(in, dtype, base + j);
      mean = block_reduce(sum, false, scratch) / static_cast<float>(row_len);
    }
    float sq = 0;
    for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) {
      float d = load_as<float>(in, dtype, base + j) - mean;
      sq += d * d;
    }
    float inv = rsqrtf(block_reduce(sq, false, scratch) / static_cast<float>(row_len) + epsilon);
    for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) {
      int64_t c = groups == 0 ? j : (r % groups) * group_channels + j / spatial;
      float y = (load_as<float>(in, dtype, base + j) - mean) * inv;
      if (scale) y *= scale[c];
      if (bias) y += bias[c];
      store_as<float>(out, dtype, base + j, y);
    }
  }
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>(n < 1 ? 1 : (n > (1 << 20) ? (1 << 20) : n)); }

}  // namespace

void launch_reduce(const void* in, int in_dtype, const Shape& kept, const int64_t* kept_st, const Shape& red,
                   const int64_t* red_st, void* out, int out_dtype, int op, Stream stream) {
  int64_t n_out = shape_numel(kept), n_red = shape_numel(red);
  if (n_out == 0) return;
  Strides a{}, b{};
  for (int k = 0; k < kept.rank; ++k) a.v[k] = kept_st[k];
  for (int k = 0; k < red.rank; ++k) b.v[k] = red_st[k];
  reduce_kernel<<<blocks_for(n_out), kThreads, 0, stream>>>(in, in_dtype, kept, a, red, b, out, out_dtype, op,
                                                            n_out, n_red);
}

void launch_reduce_rows(const void* in, int in_dtype, int64_t rows, int64_t n, void* out, int out_dtype,
                        int op, Stream stream) {
  static_assert(
      int{rSum} == kRowSum && int{rMean} == kRowMean && int{rMax} == kRowMax && int{rMin} == kRowMin,
      "one numbering");
  if (in_dtype == out_dtype && launch_reduce_rows_fast(in, out, in_dtype, rows, n, op, stream)) return;
  const int64_t kept_st = n, red_st = 1;
  launch_reduce(in, in_dtype, Shape{1, {rows}}, &kept_st, Shape{1, {n}}, &red_st, out, out_dtype, op, stream);
}

void launch_reduce_middle(const void* in, int in_dtype, int64_t outer, int64_t mid, int64_t inner, void* out,
                          int out_dtype, int op, Stream stream) {
  if (outer == 0 || inner == 0) return;
  const int64_t col_blocks = (inner + kMidCols - 1) / kMidCols;
  dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(outer < 65535 ? outer : 65535));
  reduce_middle_kernel<<<grid, dim3(kMidCols, kMidRows), 0, stream>>>(in, in_dtype, outer, mid, inner, out,
                                                                      out_dtype, op);
}

void launch_softmax(const void* in, void* out, int dtype, int64_t outer, int64_t n, int64_t inner, bool log,
                    Stream stream) {
  if (outer * inner == 0 || n == 0) return;
  if (inner == 1 && launch_softmax_fast(in, out, dtype, outer, n, log, stream)) return;
  softmax_kernel<<<blocks_for(outer * inner), kThreads, 0, stream>>>(in, out, dtype, outer, n, inner, log);
}

void launch_norm(const void* in, void* out, int dtype, int64_t rows, int64_t row_len, int64_t groups,
                 int64_t group_channels, int64_t spatial, const float* scale, const float* bias,
                 float epsilon, bool rms, Stream stream) {
  if (rows == 0 || row_len == 0) return;
  if (groups == 0 && launch_layer_norm_fast(in, out, dtype, rows, row_len, scale, bias, epsilon, rms, stream))
    return;
  norm_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(in, out, dtype, rows, row_len, groups,
                                                         group_channels, spatial, scale, bias, epsilon, rms);
}

}  // namespace kiln::engine::cuda
