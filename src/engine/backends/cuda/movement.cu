// Data movement kernels: strided copy (transpose, slice, concat, broadcast), padding, gather.

#include "engine/backends/cuda/device_util.cuh"

namespace kiln::engine::cuda {
namespace {

struct Strides {
  int64_t v[kMaxRank];
};

template <typename E>
__global__ void strided_copy_kernel(const E* in, int64_t in_base, Strides in_st, E* out, int64_t out_base,
                                    Strides out_st, Shape shape, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = i, io = in_base, oo = out_base;
    for (int k = shape.rank - 1; k >= 0; --k) {
      int64_t idx = rem % shape.d[k];
      rem /= shape.d[k];
      io += idx * in_st.v[k];
      oo += idx * out_st.v[k];
    }
    out[oo] = in[io];
  }
}

template <typename E>
__global__ void pad_kernel(const E* in, Shape in_shape, E* out, Shape out_shape, Strides pre, int mode, E fill,
                           int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = i, src = 0, stride = 1;
    bool outside = false;
    for (int k = out_shape.rank - 1; k >= 0; --k) {
      int64_t v = rem % out_shape.d[k] - pre.v[k];
      rem /= out_shape.d[k];
      int64_t len = in_shape.d[k];
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
      src += v * stride;
      stride *= len;
    }
    out[i] = (mode == 0 && outside) ? fill : in[src];
  }
}

__device__ __forceinline__ int64_t load_index(const void* idx, int dt, int64_t i) {
  return dt == kI32 ? static_cast<const int*>(idx)[i] : static_cast<const long long*>(idx)[i];
}

template <typename E>
__global__ void gather_kernel(const E* data, const void* idx, int idx_dtype, E* out, int64_t axis_len, int64_t inner,
                              int64_t n_idx, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t in_i = i % inner, j = (i / inner) % n_idx, o = i / (inner * n_idx);
    int64_t k = load_index(idx, idx_dtype, j);
    if (k < 0) k += axis_len;
    out[i] = (k >= 0 && k < axis_len) ? data[(o * axis_len + k) * inner + in_i] : E(0);
  }
}

template <typename E>
__global__ void gather_elements_kernel(const E* data, Shape data_shape, const void* idx, int idx_dtype,
                                       Shape idx_shape, int axis, E* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = i, src = 0, stride = 1;
    bool bad = false;
    for (int d = idx_shape.rank - 1; d >= 0; --d) {
      int64_t v = rem % idx_shape.d[d];
      rem /= idx_shape.d[d];
      if (d == axis) {
        v = load_index(idx, idx_dtype, i);
        if (v < 0) v += data_shape.d[d];
        bad = bad || v < 0 || v >= data_shape.d[d];
      }
      src += v * stride;
      stride *= data_shape.d[d];
    }
    out[i] = bad ? E(0) : data[src];
  }
}

template <typename F>
void by_size(int elem_size, F&& f) {
  switch (elem_size) {
    case 1: f(static_cast<unsigned char*>(nullptr)); break;
    case 2: f(static_cast<unsigned short*>(nullptr)); break;
    case 4: f(static_cast<unsigned int*>(nullptr)); break;
    default: f(static_cast<unsigned long long*>(nullptr)); break;
  }
}

constexpr int kThreads = 256;

}  // namespace

void launch_strided_copy(const void* in, int64_t in_base, const int64_t* in_st, void* out, int64_t out_base,
                         const int64_t* out_st, const Shape& shape, int elem_size, Stream stream) {
  int64_t n = shape_numel(shape);
  if (n == 0) return;
  Strides a{}, b{};
  for (int k = 0; k < shape.rank; ++k) {
    a.v[k] = in_st[k];
    b.v[k] = out_st[k];
  }
  by_size(elem_size, [&](auto* tag) {
    using E = std::remove_pointer_t<decltype(tag)>;
    strided_copy_kernel<E><<<grid_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<const E*>(in), in_base, a, static_cast<E*>(out), out_base, b, shape, n);
  });
}

void launch_pad(const void* in, const Shape& in_shape, void* out, const Shape& out_shape, const int64_t* pre, int mode,
                uint64_t fill, int elem_size, Stream stream) {
  int64_t n = shape_numel(out_shape);
  if (n == 0) return;
  Strides p{};
  for (int k = 0; k < out_shape.rank; ++k) p.v[k] = pre[k];
  by_size(elem_size, [&](auto* tag) {
    using E = std::remove_pointer_t<decltype(tag)>;
    E f;
    memcpy(&f, &fill, sizeof(E));
    pad_kernel<E><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const E*>(in), in_shape,
                                                                  static_cast<E*>(out), out_shape, p, mode, f, n);
  });
}

void launch_gather(const void* data, const void* idx, int idx_dtype, void* out, int64_t outer, int64_t axis_len,
                   int64_t inner, int64_t n_idx, int elem_size, Stream stream) {
  int64_t n = outer * n_idx * inner;
  if (n == 0) return;
  by_size(elem_size, [&](auto* tag) {
    using E = std::remove_pointer_t<decltype(tag)>;
    gather_kernel<E><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const E*>(data), idx, idx_dtype,
                                                                     static_cast<E*>(out), axis_len, inner, n_idx, n);
  });
}

void launch_gather_elements(const void* data, const Shape& data_shape, const void* idx, int idx_dtype,
                            const Shape& idx_shape, int axis, void* out, int elem_size, Stream stream) {
  int64_t n = shape_numel(idx_shape);
  if (n == 0) return;
  by_size(elem_size, [&](auto* tag) {
    using E = std::remove_pointer_t<decltype(tag)>;
    gather_elements_kernel<E><<<grid_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<const E*>(data), data_shape, idx, idx_dtype, idx_shape, axis, static_cast<E*>(out), n);
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
