#pragma once
// Device helpers shared by the CUDA backend's .cu files: element loads/stores of any Kiln dtype, index
// arithmetic, launch sizes.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "engine/backends/cuda/launch.h"

namespace kiln::engine::cuda {

/// A stored fp32 / fp16 / bf16 element as float, and back (rounding to nearest, as store_as does).
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

/// N consecutive elements, read and written as one access (16 bytes when N = 16 / sizeof(T)).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

/// Host side: calls f(T{}) with T the element type of floating dtype code `dt`: __half (kF16), __nv_bfloat16
/// (kBF16), float otherwise (for launchers whose kernels take fp32, fp16 and bf16).
template <typename F>
void with_float_element(int dt, F&& f) {
  switch (dt) {
    case kF16: f(__half{}); break;
    case kBF16: f(__nv_bfloat16{}); break;
    default: f(float{}); break;
  }
}

/// Element i of `p` (dtype code dt) converted to T.
template <typename T>
__device__ __forceinline__ T load_as(const void* p, int dt, int64_t i) {
  switch (dt) {
    case kF32: return static_cast<T>(static_cast<const float*>(p)[i]);
    case kF16: return static_cast<T>(__half2float(static_cast<const __half*>(p)[i]));
    case kBF16: return static_cast<T>(__bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]));
    case kF64: return static_cast<T>(static_cast<const double*>(p)[i]);
    case kI64: return static_cast<T>(static_cast<const long long*>(p)[i]);
    case kI32: return static_cast<T>(static_cast<const int*>(p)[i]);
    case kI16: return static_cast<T>(static_cast<const short*>(p)[i]);
    case kI8: return static_cast<T>(static_cast<const signed char*>(p)[i]);
    case kU8: return static_cast<T>(static_cast<const unsigned char*>(p)[i]);
    default: return static_cast<const unsigned char*>(p)[i] ? T(1) : T(0);
  }
}

/// Stores v into element i: floats round to nearest, integers truncate toward zero (NaN gives 0), Bool = v != 0.
template <typename T>
__device__ __forceinline__ void store_as(void* p, int dt, int64_t i, T v) {
  auto integer = [&]() -> long long { return v == v ? static_cast<long long>(v) : 0; };
  switch (dt) {
    case kF32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case kF16: static_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(v)); break;
    case kBF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v)); break;
    case kF64: static_cast<double*>(p)[i] = static_cast<double>(v); break;
    case kI64: static_cast<long long*>(p)[i] = integer(); break;
    case kI32: static_cast<int*>(p)[i] = static_cast<int>(integer()); break;
    case kI16: static_cast<short*>(p)[i] = static_cast<short>(integer()); break;
    case kI8: static_cast<signed char*>(p)[i] = static_cast<signed char>(integer()); break;
    case kU8: static_cast<unsigned char*>(p)[i] = static_cast<unsigned char>(integer()); break;
    default: static_cast<unsigned char*>(p)[i] = v != T(0) ? 1 : 0; break;
  }
}

/// Stores a double into element i exactly as the reference kernels' store(): floats round to nearest (fp16
/// and bf16 through float), integers truncate toward zero and saturate at the type's range (NaN gives 0),
/// Bool = v != 0.
__device__ __forceinline__ void store_double(void* p, int dt, int64_t i, double v) {
  auto sat = [&](double lo, double hi) -> long long {
    if (v != v) return 0;
    if (v <= lo) return static_cast<long long>(lo);
    if (v >= hi) return dt == kI64 ? 9223372036854775807LL : static_cast<long long>(hi);
    return static_cast<long long>(v);
  };
  switch (dt) {
    case kI64: static_cast<long long*>(p)[i] = sat(-9223372036854775808.0, 9223372036854775807.0); break;
    case kI32: static_cast<int*>(p)[i] = static_cast<int>(sat(-2147483648.0, 2147483647.0)); break;
    case kI16: static_cast<short*>(p)[i] = static_cast<short>(sat(-32768.0, 32767.0)); break;
    case kI8: static_cast<signed char*>(p)[i] = static_cast<signed char>(sat(-128.0, 127.0)); break;
    case kU8: static_cast<unsigned char*>(p)[i] = static_cast<unsigned char>(sat(0.0, 255.0)); break;
    default: store_as<double>(p, dt, i, v); break;
  }
}

/// Block-wide reduction of one float (sum or max) through shared memory of blockDim.x floats; every thread gets
/// the result.
__device__ __forceinline__ float block_reduce(float v, bool is_max, float* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      float a = scratch[threadIdx.x], b = scratch[threadIdx.x + s];
      scratch[threadIdx.x] = is_max ? fmaxf(a, b) : a + b;
    }
    __syncthreads();
  }
  float r = scratch[0];
  __syncthreads();
  return r;
}

__host__ __device__ inline int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int k = 0; k < s.rank; ++k) n *= s.d[k];
  return n;
}

/// Whether `q` is 16-byte aligned (what a vector access of Pack<T, 16 / sizeof(T)> needs).
inline bool aligned16(const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 == 0; }

/// Grid size for n elements at `threads` per block, capped (kernels loop with a grid stride).
inline unsigned grid_for(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  if (b > 65535LL * 32) b = 65535LL * 32;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

}  // namespace kiln::engine::cuda
