#pragma once
// Helpers shared by the reference kernels: element load/store for any dtype, strides, broadcasting.

#include <cstring>
#include <vector>

#include "kiln/engine/backend.h"
#include "kiln/support/error.h"

namespace kiln::engine::ref {

/// Element i of `t` as double (exact for every dtype Kiln has, except int64 beyond 2^53).
inline double load(const TensorView& t, int64_t i) {
  const uint8_t* p = static_cast<const uint8_t*>(t.data) + static_cast<size_t>(i) * dtype_size(t.dtype);
  switch (t.dtype) {
    case DType::Float32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::Float64: { double v; std::memcpy(&v, p, 8); return v; }
    case DType::Float16: { uint16_t v; std::memcpy(&v, p, 2); return half_to_float(v); }
    case DType::BFloat16: { uint16_t v; std::memcpy(&v, p, 2); return bfloat16_to_float(v); }
    case DType::Int64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::Int32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::Int16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::Int8: { int8_t v; std::memcpy(&v, p, 1); return v; }
    case DType::UInt8: return *p;
    case DType::Bool: return *p ? 1.0 : 0.0;
  }
  return 0;
}

/// Writes `v` (converted, integers truncated toward zero, Bool = v != 0) into element i of `t`.
void store(const TensorView& t, int64_t i, double v);

/// All elements as doubles / written from doubles.
std::vector<double> load_all(const TensorView& t);
void store_all(const TensorView& t, const std::vector<double>& values);
/// All elements as floats / written from floats (fast path for fp32).
std::vector<float> load_floats(const TensorView& t);
void store_floats(const TensorView& t, const std::vector<float>& values);
std::vector<float> host_floats(const HostTensor& t);

/// Row-major strides of dims.
std::vector<int64_t> strides_of(const Dims& dims);
int64_t numel_of(const Dims& dims);

/// For every element of `out_dims`, the index into a tensor of dims `in_dims` broadcast to it.
/// Returns a vector of numel(out_dims) offsets.
std::vector<int64_t> broadcast_offsets(const Dims& in_dims, const Dims& out_dims);

/// Runs fn(begin, end) over [0, n) on the pool when there is one, else inline.
void parallel(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace kiln::engine::ref
