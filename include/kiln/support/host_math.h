#pragma once
// Host tensor math, the one home for it: element load/store for every dtype, C-order strides, broadcasting,
// and the small whole-tensor operations that constant folding needs (double precision, converted to the
// result dtype). Used by HostTensor, the engine's reference kernels and lowering's constant folding.

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "kiln/support/dtype.h"
#include "kiln/support/host_tensor.h"

namespace kiln {

/// Element i of the dense buffer `data` of `dtype`, as double (exact for every dtype Kiln has, except int64
/// beyond 2^53). Inline: the reference kernels call it per element.
inline double load_element(const void* data, DType dtype, int64_t i) {
  const uint8_t* p = static_cast<const uint8_t*>(data) + static_cast<size_t>(i) * dtype_size(dtype);
  switch (dtype) {
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

/// Writes `value` into element i of `data`: converted to `dtype`, integers truncated toward zero and saturated
/// at the dtype's range (NaN gives 0), Bool = value != 0.
void store_element(void* data, DType dtype, int64_t i, double value);

/// Row-major (C-order) strides of `sizes`, in elements.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes);
/// Broadcast shape of two static shapes (numpy rules); throws kiln::Error(InvalidInput) when they do not broadcast.
std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
/// For every element of `out_sizes` in C order, the offset of the element of a tensor of `in_sizes` broadcast to
/// it (in_sizes broadcasts to out_sizes).
std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& in_sizes, const std::vector<int64_t>& out_sizes);

/// Permutes dimensions (dims is a permutation of 0..rank-1).
HostTensor host_permute(const HostTensor& t, const std::vector<int64_t>& dims);
/// Broadcasts to `sizes` (numpy rules).
HostTensor host_expand(const HostTensor& t, const std::vector<int64_t>& sizes);
/// Applies `fn` elementwise with broadcasting; the result has dtype `out`.
HostTensor host_binary(const HostTensor& a, const HostTensor& b, DType out,
                       const std::function<double(double, double)>& fn);
/// Applies `fn` to every element; the result has dtype `out`.
HostTensor host_unary(const HostTensor& t, DType out, const std::function<double(double)>& fn);
/// Elements start, start+step, ... < end along `dim` (bounds already normalized to [0, size]).
HostTensor host_slice(const HostTensor& t, int64_t dim, int64_t start, int64_t end, int64_t step);
/// Concatenates along `dim`.
HostTensor host_cat(const std::vector<HostTensor>& ts, int64_t dim, DType out);

}  // namespace kiln
