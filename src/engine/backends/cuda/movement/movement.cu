// Data movement kernels besides the strided copy (strided_copy.cu): padding, gather, and inline host bytes.
// Index arithmetic is 32-bit with precomputed divisors where every count and offset fits (index_math.h).

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/movement/movement_dispatch.cuh"
#include "engine/backends/cuda/movement/movement_launch.h"
#include "engine/backends/cuda/movement/strided_copy_plan.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;

template <bool N>
using LinearOf = typename IndexKind<N>::Linear;
template <bool N>
using OffsetOf = typename IndexKind<N>::Offset;
template <bool N>
using DivOf = typename IndexKind<N>::Div;

/// Output dims of a padding, innermost first, with the input's dims, strides and leading padding.
template <bool N>
struct PadDims {
  int rank = 0;
  DivOf<N> div[kMaxRank];
  OffsetOf<N> len[kMaxRank] = {}, in_st[kMaxRank] = {}, pre[kMaxRank] = {};
};

template <typename E, bool N>
__global__ void __launch_bounds__(kThreads)
    pad_kernel(const E* in, E* out, PadDims<N> g, int mode, E fill, LinearOf<N> count) {
  using Offset = OffsetOf<N>;
  LinearOf<N> step = static_cast<LinearOf<N>>(gridDim.x) * blockDim.x;
  for (LinearOf<N> i = static_cast<LinearOf<N>>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    LinearOf<N> rem = i;
    Offset src = 0;
    bool outside = false;
#pragma unroll
    for (int k = 0; k < kMaxRank; ++k) {
      if (k >= g.rank) break;
      LinearOf<N> q = k + 1 < g.rank ? g.div[k].div(rem) : 0;
      Offset v = static_cast<Offset>(rem - q * g.div[k].d) - g.pre[k], len = g.len[k];
      rem = q;
      if (v < 0 || v >= len) {
        outside = true;
        if (mode == 1) {
          v = v < 0 ? -v : 2 * (len - 1) - v;
        } else if (mode == 2) {
          v = v < 0 ? 0 : len - 1;
        } else if (mode == 3) {
          v = ((v % len) + len) % len;
        } else {
          v = 0;
        }
      }
      src += v * g.in_st[k];
    }
    out[i] = (mode == 0 && outside) ? fill : in[src];
  }
}

__device__ __forceinline__ int64_t load_index(const void* idx, int dt, int64_t i) {
  return dt == kI32 ? static_cast<const int*>(idx)[i] : static_cast<const long long*>(idx)[i];
}

/// Default gather: data viewed as [outer, axis_len, inner], out as [outer, n_idx, inner].
template <bool N>
struct GatherDims {
  DivOf<N> inner, n_idx;
  int64_t axis_len = 0;
};

template <typename E, bool N>
__global__ void __launch_bounds__(kThreads)
    gather_kernel(const E* data, const void* idx, int idx_dtype, E* out, GatherDims<N> g, LinearOf<N> count) {
  using Offset = OffsetOf<N>;
  LinearOf<N> step = static_cast<LinearOf<N>>(gridDim.x) * blockDim.x;
  for (LinearOf<N> i = static_cast<LinearOf<N>>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    LinearOf<N> q = g.inner.div(i), o = g.n_idx.div(q);
    Offset in_i = static_cast<Offset>(i - q * g.inner.d);
    int64_t k = load_index(idx, idx_dtype, static_cast<int64_t>(q - o * g.n_idx.d));
    if (k < 0) k += g.axis_len;
    bool ok = k >= 0 && k < g.axis_len;
    Offset row = static_cast<Offset>(o) * static_cast<Offset>(g.axis_len) + static_cast<Offset>(ok ? k : 0);
    out[i] = ok ? data[row * static_cast<Offset>(g.inner.d) + in_i] : E{};
  }
}

/// Gather along the innermost dim (rows of axis_len elements in, n_idx out): each thread gathers V
/// consecutive outputs of one row (n_idx a multiple of V) and stores them as one 16-byte vector; the loads
/// are single elements of a row that the warp's other threads read too (rotary embeddings' rotate_half: 64 of
/// 64).
template <typename E, bool N>
__global__ void __launch_bounds__(kThreads)
    gather_last_kernel(const E* data, const void* idx, int idx_dtype, uint4* out, DivOf<N> vectors_per_row,
                       int64_t axis_len, LinearOf<N> count) {
  using Offset = OffsetOf<N>;
  constexpr int V = sizeof(uint4) / sizeof(E);
  LinearOf<N> step = static_cast<LinearOf<N>>(gridDim.x) * blockDim.x;
  for (LinearOf<N> i = static_cast<LinearOf<N>>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    LinearOf<N> row = vectors_per_row.div(i);
    int64_t first = static_cast<int64_t>(i - row * vectors_per_row.d) * V;
    const E* in = data + static_cast<Offset>(row) * static_cast<Offset>(axis_len);
    union {
      uint4 v;
      E e[V];
    } u;
#pragma unroll
    for (int t = 0; t < V; ++t) {
      int64_t k = load_index(idx, idx_dtype, first + t);
      if (k < 0) k += axis_len;
      u.e[t] = k >= 0 && k < axis_len ? in[k] : E{};
    }
    out[i] = u.v;
  }
}

/// Elements gather: the index tensor's dims innermost first, data strides, and the axis (innermost first).
template <bool N>
struct GatherElementsDims {
  int rank = 0, axis = 0;
  DivOf<N> div[kMaxRank];
  OffsetOf<N> data_st[kMaxRank] = {};
  int64_t axis_len = 0;
};

template <typename E, bool N>
__global__ void __launch_bounds__(kThreads)
    gather_elements_kernel(const E* data, const void* idx, int idx_dtype, E* out, GatherElementsDims<N> g,
                           LinearOf<N> count) {
  using Offset = OffsetOf<N>;
  LinearOf<N> step = static_cast<LinearOf<N>>(gridDim.x) * blockDim.x;
  for (LinearOf<N> i = static_cast<LinearOf<N>>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    LinearOf<N> rem = i;
    Offset src = 0;
    bool bad = false;
#pragma unroll
    for (int k = 0; k < kMaxRank; ++k) {
      if (k >= g.rank) break;
      LinearOf<N> q = k + 1 < g.rank ? g.div[k].div(rem) : 0;
      Offset v = static_cast<Offset>(rem - q * g.div[k].d);
      rem = q;
      if (k == g.axis) {
        int64_t x = load_index(idx, idx_dtype, static_cast<int64_t>(i));
        if (x < 0) x += g.axis_len;
        bad = bad || x < 0 || x >= g.axis_len;
        v = bad ? 0 : static_cast<Offset>(x);
      }
      src += v * g.data_st[k];
    }
    out[i] = bad ? E{} : data[src];
  }
}

/// Whether `count` outputs read from `data_numel` elements (offsets below it) fit 32-bit index math.
bool narrow_for(int64_t count, int64_t data_numel) { return fits_narrow(count, 0, data_numel); }

}  // namespace

void launch_pad(const void* in, const Shape& in_shape, void* out, const Shape& out_shape, const int64_t* pre,
                int mode, uint64_t fill, int elem_size, Stream stream) {
  int64_t n = shape_numel(out_shape);
  if (n == 0) return;
  with_index_kind(narrow_for(n, shape_numel(in_shape)), [&](auto narrow) {
    constexpr bool N = decltype(narrow)::value;
    PadDims<N> g;
    g.rank = out_shape.rank;
    int64_t st = 1;
    for (int k = 0; k < g.rank; ++k) {
      int src = out_shape.rank - 1 - k;
      g.div[k] = DivOf<N>(out_shape.d[src]);
      g.len[k] = static_cast<OffsetOf<N>>(in_shape.d[src]);
      g.pre[k] = static_cast<OffsetOf<N>>(pre[src]);
      g.in_st[k] = static_cast<OffsetOf<N>>(st);
      st *= in_shape.d[src];
    }
    by_size(elem_size, [&](auto* tag) {
      using E = ElementOf<decltype(tag)>;
      if constexpr (sizeof(E) <= 8) {
        E f;
        memcpy(&f, &fill, sizeof(E));
        pad_kernel<E, N><<<grid_for(n, kThreads), kThreads, 0, stream>>>(
            static_cast<const E*>(in), static_cast<E*>(out), g, mode, f, static_cast<LinearOf<N>>(n));
      }
    });
  });
}

void launch_gather(const void* data, const void* idx, int idx_dtype, void* out, int64_t outer,
                   int64_t axis_len, int64_t inner, int64_t n_idx, int elem_size, Stream stream) {
  int64_t n = outer * n_idx * inner;
  if (n == 0) return;
  // Along the innermost dim: 16-byte stores of consecutive outputs where every output row is 16-byte aligned.
  if (inner == 1 && elem_size < 16 &&
      widest_access(reinterpret_cast<uintptr_t>(out) | static_cast<uint64_t>(n_idx * elem_size)) == 16) {
    const int64_t per_row = n_idx * elem_size / 16, vectors = outer * per_row;
    with_index_kind(narrow_for(vectors, outer * axis_len), [&](auto narrow) {
      constexpr bool N = decltype(narrow)::value;
      by_size(elem_size, [&](auto* tag) {
        using E = ElementOf<decltype(tag)>;
        gather_last_kernel<E, N><<<grid_for(vectors, kThreads), kThreads, 0, stream>>>(
            static_cast<const E*>(data), idx, idx_dtype, static_cast<uint4*>(out), DivOf<N>(per_row),
            axis_len, static_cast<LinearOf<N>>(vectors));
      });
    });
    return;
  }
  // Rows of `inner` elements move whole: as vectors of up to 16 bytes where the addresses and the row allow.
  int width = widest_access(reinterpret_cast<uintptr_t>(data) | reinterpret_cast<uintptr_t>(out) |
                            static_cast<uint64_t>(inner * elem_size));
  if (width > elem_size) {
    inner /= width / elem_size;
    n /= width / elem_size;
    elem_size = width;
  }
  with_index_kind(narrow_for(n, outer * axis_len * inner), [&](auto narrow) {
    constexpr bool N = decltype(narrow)::value;
    GatherDims<N> g;
    g.inner = DivOf<N>(inner);
    g.n_idx = DivOf<N>(n_idx);
    g.axis_len = axis_len;
    by_size(elem_size, [&](auto* tag) {
      using E = ElementOf<decltype(tag)>;
      gather_kernel<E, N><<<grid_for(n, kThreads), kThreads, 0, stream>>>(
          static_cast<const E*>(data), idx, idx_dtype, static_cast<E*>(out), g, static_cast<LinearOf<N>>(n));
    });
  });
}

void launch_gather_elements(const void* data, const Shape& data_shape, const void* idx, int idx_dtype,
                            const Shape& idx_shape, int axis, void* out, int elem_size, Stream stream) {
  int64_t n = shape_numel(idx_shape);
  if (n == 0) return;
  with_index_kind(narrow_for(n, shape_numel(data_shape)), [&](auto narrow) {
    constexpr bool N = decltype(narrow)::value;
    GatherElementsDims<N> g;
    g.rank = idx_shape.rank;
    g.axis = idx_shape.rank - 1 - axis;
    g.axis_len = data_shape.d[axis];
    int64_t st = 1;
    for (int k = 0; k < g.rank; ++k) {
      int src = idx_shape.rank - 1 - k;
      g.div[k] = DivOf<N>(idx_shape.d[src]);
      g.data_st[k] = static_cast<OffsetOf<N>>(st);
      st *= data_shape.d[src];
    }
    by_size(elem_size, [&](auto* tag) {
      using E = ElementOf<decltype(tag)>;
      if constexpr (sizeof(E) <= 8) {
        gather_elements_kernel<E, N><<<grid_for(n, kThreads), kThreads, 0, stream>>>(
            static_cast<const E*>(data), idx, idx_dtype, static_cast<E*>(out), g,
            static_cast<LinearOf<N>>(n));
      }
    });
  });
}

}  // namespace kiln::engine::cuda

namespace kiln::engine::cuda {
namespace {
struct InlineBytes {
  unsigned char b[1024];
};
__global__ void inline_copy_kernel(unsigned char* dst, InlineBytes bytes, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = bytes.b[i];
}
}  // namespace

/// Copies up to 1024 host bytes passed by value as the kernel's parameter (no host buffer outlives the call).
void launch_inline_copy(void* dst, const void* bytes, size_t n, Stream stream) {
  InlineBytes b;
  memcpy(b.b, bytes, n);
  inline_copy_kernel<<<1, 256, 0, stream>>>(static_cast<unsigned char*>(dst), b, static_cast<int>(n));
}

}  // namespace kiln::engine::cuda
