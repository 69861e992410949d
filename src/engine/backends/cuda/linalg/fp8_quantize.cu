// FP8 E4M3 quantization of activations (fp8_quantize.h): 8 elements per thread (one 16-byte load of
// fp16/bf16, one 8-byte store) where the pointers allow, else one element per thread.

#include "engine/backends/cuda/device_util.cuh"
#include "engine/backends/cuda/linalg/e4m3.cuh"
#include "engine/backends/cuda/linalg/fp8_quantize.h"

namespace kiln::engine::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kVec = 8;

template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
    quantize_kernel(const T* __restrict__ x, uint8_t* __restrict__ out, int64_t groups, float inverse_scale) {
  for (int64_t g = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; g < groups;
       g += int64_t{gridDim.x} * blockDim.x) {
    const Pack<T, V> in = reinterpret_cast<const Pack<T, V>*>(x)[g];
    Pack<uint8_t, V> q;
#pragma unroll
    for (int j = 0; j < V; ++j) q.v[j] = to_e4m3(to_float(in.v[j]) * inverse_scale);
    reinterpret_cast<Pack<uint8_t, V>*>(out)[g] = q;
  }
}

bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <typename T>
void launch_as(const void* x, int64_t n, float inverse_scale, uint8_t* out, Stream stream) {
  const T* in = static_cast<const T*>(x);
  if (n % kVec == 0 && aligned(x, sizeof(T) * kVec) && aligned(out, kVec)) {
    quantize_kernel<T, kVec>
        <<<grid_for(n / kVec, kThreads), kThreads, 0, stream>>>(in, out, n / kVec, inverse_scale);
  } else {
    quantize_kernel<T, 1><<<grid_for(n, kThreads), kThreads, 0, stream>>>(in, out, n, inverse_scale);
  }
}

}  // namespace

void launch_quantize_e4m3(const void* x, int dtype, int64_t n, float inverse_scale, uint8_t* out,
                          Stream stream) {
  if (n == 0) return;
  with_float_element(dtype, [&](auto t) { launch_as<decltype(t)>(x, n, inverse_scale, out, stream); });
}

}  // namespace kiln::engine::cuda
