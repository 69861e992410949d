// FP8 E4M3 and INT8 quantization of activations (fp8_quantize.h): 8 elements per thread (one 16-byte load of
// fp16/bf16, one 8-byte store) where the pointers allow, else one element per thread.

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/linalg/e4m3.cuh"
#include "engine/backends/cuda/linalg/fp8_quantize.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kVec = 8;

struct ToE4m3 {
  using Code = uint8_t;
  __device__ static Code of(float v) { return to_e4m3(v); }
};
struct ToS8 {
  using Code = int8_t;
  __device__ static Code of(float v) {
    return v != v ? Code{0} : static_cast<Code>(max(-128, min(127, __float2int_rn(v))));
  }
};

template <typename To, typename T, int V>
__global__ void __launch_bounds__(kThreads) quantize_kernel(const T* __restrict__ x, typename To::Code* __restrict__ out,
                                                            int64_t groups, float inverse_scale) {
  using Code = typename To::Code;
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups;
       g += int64_t{gridDim.x} * blockDim.x) {
    const Pack<T, V> in = reinterpret_cast<const Pack<T, V>*>(x)[g];
    Pack<Code, V> q;
#pragma unroll
    for (int j = 0; j < V; ++j) q.v[j] = To::of(to_float(in.v[j]) * inverse_scale);
    reinterpret_cast<Pack<Code, V>*>(out)[g] = q;
  }
}

bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <typename To, typename T>
void launch_as(const void* x, int64_t n, float inverse_scale, typename To::Code* out, Stream stream) {
  const T* in = static_cast<const T*>(x);
  if (n % kVec == 0 && aligned(x, sizeof(T) * kVec) && aligned(out, kVec)) {
    quantize_kernel<To, T, kVec>
        <<<grid_for(n / kVec, kThreads), kThreads, 0, stream>>>(in, out, n / kVec, inverse_scale);
  } else {
    quantize_kernel<To, T, 1><<<grid_for(n, kThreads), kThreads, 0, stream>>>(in, out, n, inverse_scale);
  }
}

}  // namespace

void launch_quantize_e4m3(const void* x, int dtype, int64_t n, float inverse_scale, uint8_t* out,
                          Stream stream) {
  if (n == 0) return;
  with_float_element(dtype, [&](auto t) { launch_as<ToE4m3, decltype(t)>(x, n, inverse_scale, out, stream); });
}

void launch_quantize_s8(const void* x, int dtype, int64_t n, float inverse_scale, int8_t* out, Stream stream) {
  if (n == 0) return;
  with_float_element(dtype, [&](auto t) { launch_as<ToS8, decltype(t)>(x, n, inverse_scale, out, stream); });
}

}  // namespace kiln::engine::cuda
