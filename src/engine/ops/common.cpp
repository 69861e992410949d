#include "engine/ops/common.h"

namespace kiln::engine::ops {

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

int64_t checked_index(double v, int64_t n) {
  int64_t i = static_cast<int64_t>(v);
  if (i < 0) i += n;
  KILN_CHECK(i >= 0 && i < n, InvalidInput, "index ", static_cast<int64_t>(v), " out of range for size ", n);
  return i;
}

Split split_at(const Dims& d, int64_t axis) {
  Split s;
  for (int64_t i = 0; i < axis; ++i) s.outer *= d[i];
  s.n = d[axis];
  for (size_t i = static_cast<size_t>(axis) + 1; i < d.size(); ++i) s.inner *= d[i];
  return s;
}

std::vector<int64_t> to3(const Dims& d, size_t ns, int64_t fill) {
  std::vector<int64_t> r(3, fill);
  for (size_t i = 0; i < ns; ++i) r[3 - ns + i] = d[d.size() - ns + i];
  return r;
}

std::vector<int64_t> vec3(std::vector<int64_t> v, size_t ns, int64_t fill) {
  if (v.empty()) v.assign(ns, fill);
  while (v.size() < 3) v.insert(v.begin(), fill);
  return v;
}

void unary_map(KernelArgs& args, const std::function<double(double)>& f) {
  const TensorView& x = args.inputs[0];
  const TensorView& y = args.outputs[0];
  parallel(args.pool, y.numel(), kPointwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) store(y, i, f(load(x, i)));
  });
}

int64_t load_int(const TensorView& t, int64_t i) {
  const uint8_t* p = static_cast<const uint8_t*>(t.data) + static_cast<size_t>(i) * dtype_size(t.dtype);
  switch (t.dtype) {
    case DType::Int64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DType::Int32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::Int16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case DType::Int8: return static_cast<int8_t>(*p);
    case DType::UInt8: return *p;
    case DType::Bool: return *p != 0 ? 1 : 0;
    default: KILN_FAIL(Internal, "load_int of a ", dtype_name(t.dtype), " tensor");
  }
}

void store_int(const TensorView& t, int64_t i, int64_t v) {
  uint8_t* p = static_cast<uint8_t*>(t.data) + static_cast<size_t>(i) * dtype_size(t.dtype);
  switch (t.dtype) {
    case DType::Int64: std::memcpy(p, &v, 8); return;
    case DType::Int32: {
      const auto x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      return;
    }
    case DType::Int16: {
      const auto x = static_cast<int16_t>(v);
      std::memcpy(p, &x, 2);
      return;
    }
    case DType::Int8:
    case DType::UInt8: *p = static_cast<uint8_t>(v); return;
    case DType::Bool: *p = v != 0 ? 1 : 0; return;
    default: KILN_FAIL(Internal, "store_int into a ", dtype_name(t.dtype), " tensor");
  }
}

void parallel(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool && pool->size() > 1 && n > grain) {
    pool->parallel_for(n, grain, fn);
  } else {
    fn(0, n);
  }
}

}  // namespace kiln::engine::ops
