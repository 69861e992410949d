// Fast layer norm and softmax over contiguous rows (norm_softmax.h): the row in registers, fp32 math, shuffle
// reductions, 16-byte loads where alignment allows. Same formulas as the generic kernels of reduction.cu.

#include <cmath>
#include <type_traits>

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/linalg/e4m3.cuh"
#include "engine/backends/cuda/reduction/norm_softmax.h"

namespace kiln::engine::cuda {
namespace {

template <typename T, int V>
__device__ __forceinline__ void load_pack(const T* p, float* x) {
  Pack<T, V> pk = *reinterpret_cast<const Pack<T, V>*>(p);
#pragma unroll
  for (int k = 0; k < V; ++k) x[k] = to_float(pk.v[k]);
}

template <typename T, int V>
__device__ __forceinline__ void store_pack(T* p, const float* y) {
  Pack<T, V> pk;
#pragma unroll
  for (int k = 0; k < V; ++k) pk.v[k] = from_float<T>(y[k]);
  *reinterpret_cast<Pack<T, V>*>(p) = pk;
}

/// V floats of an affine parameter; 16-byte loads when V is a multiple of 4 (the caller checked alignment).
template <int V>
__device__ __forceinline__ void load_params(const float* p, float* x) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int q = 0; q < V / 4; ++q) {
      float4 f = reinterpret_cast<const float4*>(p)[q];
      x[4 * q] = f.x;
      x[4 * q + 1] = f.y;
      x[4 * q + 2] = f.z;
      x[4 * q + 3] = f.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) x[k] = p[k];
  }
}

/// The threads that share a row: LANES consecutive lanes of a warp (LANES > 0), or the whole block (LANES ==
/// 0).
template <int LANES>
struct Group {
  __device__ static int lane() { return LANES ? static_cast<int>(threadIdx.x) % LANES : threadIdx.x; }
  __device__ static int width() { return LANES ? LANES : blockDim.x; }
  __device__ static int index() { return LANES ? static_cast<int>(threadIdx.x) / LANES : 0; }
  __device__ static int per_block() { return LANES ? blockDim.x / LANES : 1; }
};

/// `combine` folded over the group (every thread of the group gets the result). The block variant reads the
/// per-warp values in a fixed order (deterministic) and ends with a barrier so `smem` (32 floats) can be
/// reused.
template <int LANES, typename F>
__device__ __forceinline__ float group_fold(float v, float* smem, F combine) {
  constexpr int kWidth = LANES ? LANES : 32;
#pragma unroll
  for (int o = kWidth / 2; o > 0; o >>= 1) v = combine(v, __shfl_xor_sync(0xffffffffu, v, o));
  if constexpr (LANES == 0) {
    const int warps = blockDim.x / 32;
    if ((threadIdx.x & 31) == 0) smem[threadIdx.x / 32] = v;
    __syncthreads();
    v = smem[0];
    for (int k = 1; k < warps; ++k) v = combine(v, smem[k]);
    __syncthreads();
  }
  return v;
}

/// Sum (or max) over the group.
template <int LANES, bool MAX>
__device__ __forceinline__ float group_reduce(float v, float* smem) {
  return group_fold<LANES>(v, smem, [](float a, float b) { return MAX ? fmaxf(a, b) : a + b; });
}

// Both kernels: thread `lane` of a group holds vectors lane, lane + width, ... (ITEMS of them, V elements
// each) of its row; a vector starting at or past `len` is outside the row. Groups past the last row (warp
// path) still take part in the shuffles and store nothing.

/// V E4M3 codes of y / scale (y times `inverse_scale`) at `p`: one store of V bytes.
template <int V>
__device__ __forceinline__ void store_e4m3(uint8_t* p, const float* y, float inverse_scale) {
  Pack<uint8_t, V> pk;
#pragma unroll
  for (int k = 0; k < V; ++k) pk.v[k] = to_e4m3(y[k] * inverse_scale);
  *reinterpret_cast<Pack<uint8_t, V>*>(p) = pk;
}

template <typename T, int V, int ITEMS, int LANES>
__global__ void __launch_bounds__(kRowBlockMaxThreads)
    layer_norm_rows(const T* in, T* out, int64_t rows, int len, const float* scale, const float* bias,
                    float eps, bool rms, E4m3Out copy) {
  __shared__ float smem[32];
  using G = Group<LANES>;
  const int lane = G::lane(), width = G::width();
  const int64_t step = static_cast<int64_t>(gridDim.x) * G::per_block();
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * G::per_block(); first < rows; first += step) {
    const int64_t r = first + G::index();
    const bool valid = r < rows;
    const T* src = in + (valid ? r : 0) * len;
    float x[ITEMS][V];
    float sum = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      int col = (lane + i * width) * V;
      if (valid && col < len) {
        load_pack<T, V>(src + col, x[i]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) x[i][k] = 0;
      }
#pragma unroll
      for (int k = 0; k < V; ++k) sum += x[i][k];
    }
    const float mean = rms ? 0.0f : group_reduce<LANES, false>(sum, smem) / static_cast<float>(len);
    float sq = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      if ((lane + i * width) * V < len) {
#pragma unroll
        for (int k = 0; k < V; ++k) {
          float d = x[i][k] - mean;
          sq += d * d;
        }
      }
    }
    const float inv = rsqrtf(group_reduce<LANES, false>(sq, smem) / static_cast<float>(len) + eps);
    if (!valid) continue;
    T* dst = out + r * len;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      int col = (lane + i * width) * V;
      if (col >= len) continue;
      float y[V], s[V], b[V];
#pragma unroll
      for (int k = 0; k < V; ++k) y[k] = (x[i][k] - mean) * inv;
      if (scale) {
        load_params<V>(scale + col, s);
#pragma unroll
        for (int k = 0; k < V; ++k) y[k] *= s[k];
      }
      if (bias) {
        load_params<V>(bias + col, b);
#pragma unroll
        for (int k = 0; k < V; ++k) y[k] += b[k];
      }
      store_pack<T, V>(dst + col, y);
      // (the copy quantizes the values just stored, rounded to T as the Reformat it replaces would read them)
      if (copy.data) {
#pragma unroll
        for (int k = 0; k < V; ++k) y[k] = to_float(from_float<T>(y[k]));
        store_e4m3<V>(copy.data + r * len + col, y, copy.inverse_scale);
      }
    }
  }
}

template <typename T, int V, int ITEMS, int LANES>
__global__ void __launch_bounds__(kRowBlockMaxThreads)
    softmax_rows(const T* in, T* out, int64_t rows, int len, bool log) {
  __shared__ float smem[32];
  using G = Group<LANES>;
  const int lane = G::lane(), width = G::width();
  const int64_t step = static_cast<int64_t>(gridDim.x) * G::per_block();
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * G::per_block(); first < rows; first += step) {
    const int64_t r = first + G::index();
    const bool valid = r < rows;
    const T* src = in + (valid ? r : 0) * len;
    float x[ITEMS][V];
    float mx = -INFINITY;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      int col = (lane + i * width) * V;
      if (valid && col < len) {
        load_pack<T, V>(src + col, x[i]);
#pragma unroll
        for (int k = 0; k < V; ++k) mx = fmaxf(mx, x[i][k]);
      }
    }
    mx = group_reduce<LANES, true>(mx, smem);
    float sum = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      if (valid && (lane + i * width) * V < len) {
#pragma unroll
        for (int k = 0; k < V; ++k) {
          x[i][k] -= mx;
          float e = expf(x[i][k]);
          sum += e;
          if (!log) x[i][k] = e;
        }
      }
    }
    sum = group_reduce<LANES, false>(sum, smem);
    if (!valid) continue;
    const float lse = logf(sum);
    T* dst = out + r * len;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      int col = (lane + i * width) * V;
      if (col >= len) continue;
      float y[V];
#pragma unroll
      for (int k = 0; k < V; ++k) y[k] = log ? x[i][k] - lse : x[i][k] / sum;
      store_pack<T, V>(dst + col, y);
    }
  }
}

/// Combines two partial reductions of op kRowSum / kRowMean (a sum) or kRowMax / kRowMin (NaN wins, as the
/// generic kernel's combine).
template <int OP>
__device__ __forceinline__ float row_combine(float a, float b) {
  if constexpr (OP == kRowMax || OP == kRowMin) {
    if (isnan(a) || isnan(b)) return NAN;
    return OP == kRowMax ? fmaxf(a, b) : fminf(a, b);
  } else {
    return a + b;
  }
}

template <int OP>
__device__ __forceinline__ float row_identity() {
  return OP == kRowMax ? -INFINITY : OP == kRowMin ? INFINITY : 0.0f;
}

/// One output per row: the sum, mean, max or min of the row (fp32 accumulation), stored as T. The shuffles
/// go over the group's lanes (a group is at most one warp here or the whole block, whose warps meet in smem).
template <typename T, int V, int ITEMS, int LANES, int OP>
__global__ void __launch_bounds__(kRowBlockMaxThreads)
    reduce_rows(const T* in, T* out, int64_t rows, int len) {
  __shared__ float smem[32];
  using G = Group<LANES>;
  const int lane = G::lane(), width = G::width();
  const int64_t step = static_cast<int64_t>(gridDim.x) * G::per_block();
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * G::per_block(); first < rows; first += step) {
    const int64_t r = first + G::index();
    const bool valid = r < rows;
    const T* src = in + (valid ? r : 0) * len;
    float x[ITEMS][V];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {  // every load issued before the first combine
      const int col = (lane + i * width) * V;
      if (valid && col < len) {
        load_pack<T, V>(src + col, x[i]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) x[i][k] = row_identity<OP>();
      }
    }
    float acc = row_identity<OP>();
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
#pragma unroll
      for (int k = 0; k < V; ++k) acc = row_combine<OP>(acc, x[i][k]);
    }
    acc = group_fold<LANES>(acc, smem, [](float a, float b) { return row_combine<OP>(a, b); });
    if (valid && lane == 0) out[r] = from_float<T>(OP == kRowMean ? acc / static_cast<float>(len) : acc);
  }
}

/// Blocks for `rows` rows at `per_block` rows per block, capped (the kernels loop with a grid stride).
unsigned row_blocks(int64_t rows, int per_block) {
  int64_t b = (rows + per_block - 1) / per_block;
  return static_cast<unsigned>(b > (1 << 20) ? (1 << 20) : b);
}

template <int N>
using Int = std::integral_constant<int, N>;

/// Calls f(Int<ITEMS>, Int<LANES>, threads per block): the kernel's compile-time shape for plan p.
template <int V, typename F>
void with_shape(const RowPlan& p, F&& f) {
  constexpr int kMaxItems = 32 / V;
  if (p.path == RowPath::Block) {
    f(Int<kMaxItems>{}, Int<0>{}, p.threads);
  } else if (p.items != 1) {
    f(Int<kMaxItems>{}, Int<32>{}, kRowWarpBlock);
  } else if (p.lanes == 8) {
    f(Int<1>{}, Int<8>{}, kRowWarpBlock);
  } else if (p.lanes == 16) {
    f(Int<1>{}, Int<16>{}, kRowWarpBlock);
  } else {
    f(Int<1>{}, Int<32>{}, kRowWarpBlock);
  }
}

template <typename T, int V>
void layer_norm_t(const RowPlan& p, const void* in, void* out, int64_t rows, int len, const float* scale,
                  const float* bias, float eps, bool rms, E4m3Out copy, Stream stream) {
  with_shape<V>(p, [&](auto items, auto lanes, int threads) {
    constexpr int kItems = decltype(items)::value, kLanes = decltype(lanes)::value;
    int per_block = kLanes ? threads / kLanes : 1;
    layer_norm_rows<T, V, kItems, kLanes><<<row_blocks(rows, per_block), threads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), rows, len, scale, bias, eps, rms, copy);
  });
}

template <typename T, int V>
void softmax_t(const RowPlan& p, const void* in, void* out, int64_t rows, int len, bool log, Stream stream) {
  with_shape<V>(p, [&](auto items, auto lanes, int threads) {
    constexpr int kItems = decltype(items)::value, kLanes = decltype(lanes)::value;
    int per_block = kLanes ? threads / kLanes : 1;
    softmax_rows<T, V, kItems, kLanes><<<row_blocks(rows, per_block), threads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), rows, len, log);
  });
}

template <typename T, int V, int OP>
void reduce_rows_t(const RowPlan& p, const void* in, void* out, int64_t rows, int len, Stream stream) {
  with_shape<V>(p, [&](auto items, auto lanes, int threads) {
    constexpr int kItems = decltype(items)::value, kLanes = decltype(lanes)::value;
    int per_block = kLanes ? threads / kLanes : 1;
    reduce_rows<T, V, kItems, kLanes, OP><<<row_blocks(rows, per_block), threads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), rows, len);
  });
}

/// Calls f(T{}, Int<V>) for the dtype and the plan's vector width; false for other dtypes.
template <typename F>
bool with_type(int dtype, const RowPlan& p, F&& f) {
  switch (dtype) {
    case kF32: p.vec == 4 ? f(float{}, Int<4>{}) : f(float{}, Int<1>{}); return true;
    case kF16: p.vec == 8 ? f(__half{}, Int<8>{}) : f(__half{}, Int<1>{}); return true;
    case kBF16: p.vec == 8 ? f(__nv_bfloat16{}, Int<8>{}) : f(__nv_bfloat16{}, Int<1>{}); return true;
    default: return false;
  }
}

int elem_size(int dtype) { return dtype == kF32 ? 4 : 2; }

}  // namespace

bool launch_layer_norm_fast(const void* in, void* out, int dtype, int64_t rows, int64_t row_len,
                            const float* scale, const float* bias, float epsilon, bool rms, Stream stream,
                            E4m3Out copy) {
  if (dtype != kF32 && dtype != kF16 && dtype != kBF16) return false;
  bool aligned =
      aligned16(in) && aligned16(out) && aligned16(scale) && aligned16(bias) && aligned16(copy.data);
  RowPlan p = plan_rows(row_len, elem_size(dtype), aligned);
  if (p.path == RowPath::Generic) return false;
  if (rows == 0) return true;
  int len = static_cast<int>(row_len);
  return with_type(dtype, p, [&](auto t, auto v) {
    layer_norm_t<decltype(t), decltype(v)::value>(p, in, out, rows, len, scale, bias, epsilon, rms, copy,
                                                  stream);
  });
}

bool launch_softmax_fast(const void* in, void* out, int dtype, int64_t rows, int64_t row_len, bool log,
                         Stream stream) {
  if (dtype != kF32 && dtype != kF16 && dtype != kBF16) return false;
  RowPlan p = plan_rows(row_len, elem_size(dtype), aligned16(in) && aligned16(out));
  if (p.path == RowPath::Generic) return false;
  if (rows == 0) return true;
  int len = static_cast<int>(row_len);
  return with_type(dtype, p, [&](auto t, auto v) {
    softmax_t<decltype(t), decltype(v)::value>(p, in, out, rows, len, log, stream);
  });
}

bool launch_reduce_rows_fast(const void* in, void* out, int dtype, int64_t rows, int64_t row_len, int op,
                             Stream stream) {
  if (dtype != kF32 && dtype != kF16 && dtype != kBF16) return false;
  if (op != kRowSum && op != kRowMean && op != kRowMax && op != kRowMin) return false;
  RowPlan p = plan_rows(row_len, elem_size(dtype), aligned16(in));
  if (p.path == RowPath::Generic) return false;
  if (rows == 0) return true;
  const int len = static_cast<int>(row_len);
  return with_type(dtype, p, [&](auto t, auto v) {
    using T = decltype(t);
    constexpr int kV = decltype(v)::value;
    switch (op) {
      case kRowSum: return reduce_rows_t<T, kV, kRowSum>(p, in, out, rows, len, stream);
      case kRowMean: return reduce_rows_t<T, kV, kRowMean>(p, in, out, rows, len, stream);
      case kRowMax: return reduce_rows_t<T, kV, kRowMax>(p, in, out, rows, len, stream);
      default: return reduce_rows_t<T, kV, kRowMin>(p, in, out, rows, len, stream);
    }
  });
}

}  // namespace kiln::engine::cuda
