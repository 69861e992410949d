#include "engine/reference/common.h"

#include <cmath>
#include <limits>

namespace kiln::engine::ref {

namespace {
template <typename T>
T to_int(double v) {
  if (std::isnan(v)) return 0;
  double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::lowest();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
}  // namespace

void store(const TensorView& t, int64_t i, double v) {
  uint8_t* p = static_cast<uint8_t*>(t.data) + static_cast<size_t>(i) * dtype_size(t.dtype);
  switch (t.dtype) {
    case DType::Float32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); return; }
    case DType::Float64: std::memcpy(p, &v, 8); return;
    case DType::Float16: { uint16_t x = float_to_half(static_cast<float>(v)); std::memcpy(p, &x, 2); return; }
    case DType::BFloat16: { uint16_t x = float_to_bfloat16(static_cast<float>(v)); std::memcpy(p, &x, 2); return; }
    case DType::Int64: { int64_t x = to_int<int64_t>(v); std::memcpy(p, &x, 8); return; }
    case DType::Int32: { int32_t x = to_int<int32_t>(v); std::memcpy(p, &x, 4); return; }
    case DType::Int16: { int16_t x = to_int<int16_t>(v); std::memcpy(p, &x, 2); return; }
    case DType::Int8: { int8_t x = to_int<int8_t>(v); std::memcpy(p, &x, 1); return; }
    case DType::UInt8: *p = to_int<uint8_t>(v); return;
    case DType::Bool: *p = v != 0 ? 1 : 0; return;
  }
}

std::vector<double> load_all(const TensorView& t) {
  int64_t n = t.numel();
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = load(t, i);
  return out;
}

void store_all(const TensorView& t, const std::vector<double>& values) {
  for (size_t i = 0; i < values.size(); ++i) store(t, static_cast<int64_t>(i), values[i]);
}

std::vector<float> load_floats(const TensorView& t) {
  int64_t n = t.numel();
  std::vector<float> out(static_cast<size_t>(n));
  if (t.dtype == DType::Float32) {
    if (n) std::memcpy(out.data(), t.data, static_cast<size_t>(n) * 4);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(load(t, i));
  }
  return out;
}

void store_floats(const TensorView& t, const std::vector<float>& values) {
  if (t.dtype == DType::Float32) {
    if (!values.empty()) std::memcpy(t.data, values.data(), values.size() * 4);
    return;
  }
  for (size_t i = 0; i < values.size(); ++i) store(t, static_cast<int64_t>(i), values[i]);
}

std::vector<float> host_floats(const HostTensor& t) {
  TensorView v{const_cast<uint8_t*>(t.data()), t.dtype(), t.sizes()};
  return load_floats(v);
}

std::vector<int64_t> strides_of(const Dims& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

int64_t numel_of(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> broadcast_offsets(const Dims& in_dims, const Dims& out_dims) {
  size_t r = out_dims.size();
  size_t off = r - in_dims.size();
  std::vector<int64_t> in_strides = strides_of(in_dims);
  std::vector<int64_t> bstride(r, 0);
  for (size_t i = 0; i < in_dims.size(); ++i) bstride[off + i] = in_dims[i] == 1 ? 0 : in_strides[i];
  int64_t n = numel_of(out_dims);
  std::vector<int64_t> result(static_cast<size_t>(n));
  std::vector<int64_t> idx(r, 0);
  int64_t cur = 0;
  for (int64_t e = 0; e < n; ++e) {
    result[e] = cur;
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      if (++idx[d] < out_dims[d]) { cur += bstride[d]; break; }
      cur -= bstride[d] * (out_dims[d] - 1);
      idx[d] = 0;
    }
  }
  return result;
}

void parallel(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool && pool->size() > 1 && n > grain) {
    pool->parallel_for(n, grain, fn);
  } else {
    fn(0, n);
  }
}

}  // namespace kiln::engine::ref
