#include "engine/reference/common.h"

namespace kiln::engine::ref {

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

void parallel(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool && pool->size() > 1 && n > grain) {
    pool->parallel_for(n, grain, fn);
  } else {
    fn(0, n);
  }
}

}  // namespace kiln::engine::ref
