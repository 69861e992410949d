#pragma once
// Helpers shared by the compiler and compiled-module tests: fixture paths, io_N inputs, output comparison.

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "kiln/support/host_tensor.h"
#include "kiln/support/npz.h"

namespace kiln::testing_util {

inline std::string fixture(const std::string& name, const std::string& file = "model.pt2") {
  return std::string(KILN_TEST_DATA_DIR) + "/" + name + "/" + file;
}

/// input_0, input_1, ... of an io_N.npz.
inline std::vector<HostTensor> io_inputs(const std::map<std::string, HostTensor>& io) {
  std::vector<HostTensor> inputs;
  for (size_t k = 0;; ++k) {
    auto it = io.find("input_" + std::to_string(k));
    if (it == io.end()) break;
    inputs.push_back(it->second);
  }
  return inputs;
}

struct Closeness {
  bool same_shape = true;
  double max_abs = 0.0;
  double cosine = 1.0;
};

/// Max abs error and cosine similarity in double precision (NaN anywhere gives max_abs = inf).
inline Closeness closeness(const HostTensor& actual, const HostTensor& expected) {
  Closeness c;
  c.same_shape = actual.sizes() == expected.sizes();
  if (!c.same_shape) return c;
  double dot = 0.0, na = 0.0, nb = 0.0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double a = actual.get_as_double(i);
    double b = expected.get_as_double(i);
    c.max_abs = std::max(c.max_abs, std::isnan(a) || std::isnan(b) ? INFINITY : std::fabs(a - b));
    dot += a * b;
    na += a * a;
    nb += b * b;
  }
  c.cosine = (na == 0.0 && nb == 0.0) ? 1.0 : dot / std::sqrt(na * nb);
  return c;
}

/// Fills a float tensor with a fixed pseudo-random sequence in [-1, 1) (never all zeros or ones).
inline HostTensor random_floats(std::vector<int64_t> sizes, uint32_t seed) {
  HostTensor t(DType::Float32, std::move(sizes));
  uint32_t state = seed * 2654435761u + 12345u;
  float* data = t.mutable_data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 1664525u + 1013904223u;
    data[i] = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return t;
}

}  // namespace kiln::testing_util
