#pragma once
// Helpers for lowering pass tests: IR text before -> pass -> expected IR text (exact compare of print_graph),
// plus a numerical check through the libtorch reference executor on random inputs (fixed seeds).

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kiln/frontend/op_schema.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/lowering/pass.h"
#include "kiln/support/host_tensor.h"
#ifdef KILN_LOWERING_HAVE_REFERENCE
#include "kiln/runtime/libtorch_node_executor.h"
#endif

namespace kiln::lowering::testing {

/// Symbol values used to run graphs with dynamic shapes: the hint, else 3 clamped into the range.
inline ir::SymBindings bindings_for(const ir::Graph& g) {
  ir::SymBindings b;
  for (const auto& [name, range] : g.symbol_ranges()) b[name] = std::clamp<int64_t>(3, range.min, range.max);
  for (const auto& [name, hint] : g.symbol_hints()) b[name] = hint;
  return b;
}

/// A random tensor: normal floats, integers in [0, 4], random bools.
inline HostTensor random_tensor(DType dtype, const std::vector<int64_t>& sizes, std::mt19937& rng,
                                bool positive = false) {
  HostTensor t(dtype, sizes);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.5, 1.5);
  std::uniform_int_distribution<int> ints(0, 4);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = 0;
    if (dtype == DType::Bool) {
      v = ints(rng) % 2;
    } else if (is_integral(dtype)) {
      v = ints(rng);
    } else {
      v = positive ? uniform(rng) : normal(rng);
    }
    t.set_from_double(i, v);
  }
  return t;
}

/// Gives every constant without data random data (positive for names containing "var": variances).
inline void fill_random_constants(ir::Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  for (ir::Value* c : g.constants()) {
    if (c->data().defined()) continue;
    auto sizes = c->meta().static_sizes();
    ASSERT_TRUE(sizes.has_value()) << "constant " << c->name() << " has a dynamic shape";
    c->set_data(random_tensor(c->meta().dtype, *sizes, rng, c->name().find("var") != std::string::npos));
  }
}

/// Random inputs for the graph's inputs under `bindings`.
inline std::vector<HostTensor> random_inputs(const ir::Graph& g, uint32_t seed, const ir::SymBindings& bindings) {
  std::mt19937 rng(seed);
  std::vector<HostTensor> inputs;
  for (const ir::Value* v : g.inputs()) {
    if (v->kind() == ir::ValueKind::SymInt) {
      inputs.push_back(HostTensor::from_int64s({v->sym_value() ? v->sym_value()->evaluate(bindings) : 3}, {}));
      continue;
    }
    std::vector<int64_t> sizes;
    for (const auto& s : v->meta().sizes) sizes.push_back(s.evaluate(bindings));
    inputs.push_back(random_tensor(v->meta().dtype, sizes, rng));
  }
  return inputs;
}

/// Max |a - b| over elements; fails the test on a shape or dtype mismatch. Also checks allclose.
inline void expect_allclose(const HostTensor& expected, const HostTensor& actual, double rtol, double atol,
                            const std::string& what) {
  ASSERT_EQ(expected.sizes(), actual.sizes()) << what;
  ASSERT_EQ(expected.dtype(), actual.dtype()) << what;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double e = expected.get_as_double(i);
    const double a = actual.get_as_double(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    ASSERT_LE(std::abs(e - a), atol + rtol * std::abs(e)) << what << ": element " << i << " expected " << e << " got " << a;
  }
}

/// Runs both graphs through the reference executor on the same random inputs and compares outputs.
inline void expect_same_values(const ir::Graph& before, const ir::Graph& after, double rtol, double atol,
                               uint32_t seed = 7) {
#ifdef KILN_LOWERING_HAVE_REFERENCE
  const auto inputs = random_inputs(before, seed, bindings_for(before));
  const auto want = runtime::run_in_libtorch(before, inputs);
  const auto got = runtime::run_in_libtorch(after, inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) expect_allclose(want[i], got[i], rtol, atol, "output " + std::to_string(i));
#else
  (void)before, (void)after, (void)rtol, (void)atol, (void)seed;
#endif
}

/// Every node whose op Kiln's schema table knows carries its arguments in schema order (names and
/// kwarg-only flags unchanged by normalization).
inline void expect_schema_order(const ir::Graph& g) {
  for (const ir::Node* node : g.nodes()) {
    const frontend::OpSchema* schema = frontend::find_op_schema(node->target());
    if (schema == nullptr) continue;
    std::vector<std::string> names;
    for (const auto& a : node->args()) names.push_back(a.name);
    std::vector<std::string> want;
    for (const auto& a : schema->arguments) want.push_back(a.name);
    EXPECT_EQ(names, want) << "arguments of " << node->name() << " (" << node->target().to_string() << ")";
  }
}

struct PassCheck {
  double rtol = 1e-5;
  double atol = 1e-6;
  bool numeric = true;
  ir::PrintOptions print;
  PassContext context;
};

/// Parses `before`, runs `pass`, and checks: the printed result equals `expected` (normalized through the
/// parser), the graph verifies, a second run changes nothing, arguments are in schema order, and (when
/// numeric) the values match the original graph's.
inline void expect_pass(Pass& pass, const std::string& before, const std::string& expected,
                        const PassCheck& check = {}) {
  auto graph = ir::parse_graph(before);
  fill_random_constants(*graph, 1234);
  auto original = graph->clone();
  const bool changed = pass.run(*graph, check.context);
  ir::verify(*graph);
  auto want = ir::parse_graph(expected);
  EXPECT_EQ(ir::print_graph(*graph, check.print), ir::print_graph(*want, check.print));
  EXPECT_EQ(changed, ir::print_graph(*original) != ir::print_graph(*graph));
  auto again = graph->clone();
  EXPECT_FALSE(pass.run(*again, check.context)) << "a second run changed the graph:\n" << ir::print_graph(*again);
  expect_schema_order(*graph);
  if (check.numeric) expect_same_values(*original, *graph, check.rtol, check.atol);
}

}  // namespace kiln::lowering::testing
