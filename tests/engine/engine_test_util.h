#pragma once
// Helpers for engine tests: random tensors, building and running a network on the CPU, comparisons.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kiln/engine/builder.h"
#include "kiln/engine/execution_context.h"
#include "kiln/engine/network.h"

namespace kiln::engine::testing {

/// Uniform random values in [lo, hi) (integers rounded) of any dtype.
inline HostTensor random_tensor(DType dtype, Dims dims, std::mt19937& rng, double lo = -1.0, double hi = 1.0) {
  HostTensor t(dtype, dims);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = dist(rng);
    if (!is_floating(dtype)) v = std::floor(v);
    t.set_from_double(i, v);
  }
  return t;
}

/// Values as doubles.
inline std::vector<double> values(const HostTensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.get_as_double(i);
  return v;
}

inline std::shared_ptr<Plan> build(const Network& net, BuilderConfig config = {}) {
  config.threads = config.threads ? config.threads : 2;
  return Builder(config).build(net);
}

/// Runs a plan with named inputs; returns the outputs in binding order.
inline std::vector<HostTensor> run(const std::shared_ptr<const Plan>& plan, const std::map<std::string, HostTensor>& inputs,
                                   int profile = 0) {
  ExecutionContext ctx(plan, profile);
  for (const auto& [name, t] : inputs) {
    ctx.set_input_shape(name, t.sizes());
    ctx.set_tensor_address(name, const_cast<uint8_t*>(t.data()));
  }
  std::vector<HostTensor> outs;
  std::vector<std::string> names;
  for (const auto& b : plan->bindings()) {
    if (b.is_input) continue;
    Dims d = ctx.tensor_shape(b.name);
    if (b.data_dependent) {
      int64_t n = 1;
      for (const auto& [name, t] : inputs) n = std::max(n, t.numel());
      d = {n, d[1]};
    }
    outs.emplace_back(b.dtype, d);
    names.push_back(b.name);
  }
  for (size_t i = 0; i < outs.size(); ++i) ctx.set_tensor_address(names[i], outs[i].mutable_data());
  ctx.execute();
  return outs;
}

/// Expects |got - want| <= atol + rtol * |want| elementwise (NaN matches NaN).
inline void expect_close(const HostTensor& got, const std::vector<double>& want, double rtol, double atol,
                         const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = got.get_as_double(static_cast<int64_t>(i));
    if (std::isnan(want[i]) && std::isnan(g)) continue;
    if (std::isinf(want[i]) && g == want[i]) continue;
    if (!(std::fabs(g - want[i]) <= atol + rtol * std::fabs(want[i]))) {
      if (++bad <= 5) ADD_FAILURE() << what << ": element " << i << " got " << g << " want " << want[i];
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

}  // namespace kiln::engine::testing
