#pragma once
// Helpers shared by the compiler and compiled-module tests: fixture paths, io_N inputs, output comparison.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

/// The io_N.npz files of a fixture folder, sorted.
inline std::vector<std::string> io_files(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& f : std::filesystem::directory_iterator(folder)) {
    std::string name = f.path().filename().string();
    if (name.rfind("io_", 0) == 0 && f.path().extension() == ".npz") out.push_back(f.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Expects a module's user outputs (`outputs` at `users`) to match output_0, output_1, ... of `io`: same shapes,
/// cosine >= min_cosine, max abs <= max_abs (times the expected output's largest magnitude, at least 1, when
/// `relative`).
inline void expect_outputs_match(const std::vector<HostTensor>& outputs, const std::vector<size_t>& users,
                                 const std::map<std::string, HostTensor>& io, double min_cosine, double max_abs,
                                 bool relative, const std::string& label) {
  ASSERT_FALSE(users.empty()) << label;
  for (size_t k = 0; k < users.size(); ++k) {
    auto expected = io.find("output_" + std::to_string(k));
    ASSERT_NE(expected, io.end()) << label << " output_" << k;
    const HostTensor& actual = outputs[users[k]];
    Closeness c = closeness(actual, expected->second);
    ASSERT_TRUE(c.same_shape) << label << " output_" << k << ": " << actual.describe() << " vs "
                              << expected->second.describe();
    double bound = max_abs;
    if (relative) {
      double magnitude = 1.0;
      for (int64_t i = 0; i < expected->second.numel(); ++i) {
        magnitude = std::max(magnitude, std::fabs(expected->second.get_as_double(i)));
      }
      bound *= magnitude;
    }
    EXPECT_GE(c.cosine, min_cosine) << label << " output_" << k;
    EXPECT_LE(c.max_abs, bound) << label << " output_" << k;
  }
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
