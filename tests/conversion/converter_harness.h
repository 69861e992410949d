#pragma once
// The converter test harness: a few-op program (IR text) is converted by the interpreter, built by the engine
// Builder and run through ExecutionContext on every backend under test, then compared with libtorch eager
// (runtime::run_in_libtorch) on random inputs (fixed seeds, never constant), for one or more input shapes. A
// graph with symbolic dims is built once with its dynamic ranges and run at every listed shape.
//
// Backends: "cpu" by default; KILN_TEST_BACKENDS (comma separated, e.g. "cuda" or "cpu,cuda") names the ones
// to run on instead. A case asked to run on a backend this machine cannot create (cuda without a GPU, or a
// build without the CUDA backend) skips with a message saying why: the ctest kiln_conversion_gpu_tests (label
// gpu) runs the harness cases with KILN_TEST_BACKENDS=cuda.
//
// Tolerance: fp32 allclose(rtol=1e-4, atol=1e-5): both sides compute in fp32, but kernels accumulate in a
// different order (blocked oneDNN convolutions/matmuls, vectorized reductions, polynomial exp/erf), which
// moves results by a few ulps of the accumulated magnitude; 1e-4 relative covers sums of a few hundred terms.
// A case whose settings enable f16 or bf16 (weakly typed: the builder runs the whole plan in the lower
// precision, fp16 before bf16, casting the fp32 inputs down and the outputs back) is compared with the fp32
// libtorch reference by its max relative error, max |got - want| over the largest |want|, <= 1e-2: bf16 keeps
// 8 significant bits (unit roundoff 2^-8 ~ 3.9e-3), fp16 11 bits, and each value is rounded a few times
// (input, weights, output) while products accumulate in fp32. The bound is norm-wise, not per element: an
// output near zero that sums terms of magnitude ~1 carries an absolute error of ~2^-9 x sum |terms| in bf16
// (measured on an H100: 25 of 960 conv outputs outside an element-wise 1e-2). The plan must contain a cast to
// the reduced type (otherwise the case would compare fp32 with fp32).

#include <functional>
#include <ostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kiln/settings/compilation_settings.h"
#include "kiln/conversion/interpreter.h"
#include "kiln/support/host_tensor.h"

namespace kiln::conversion::testing {

/// How to fill one input: uniform in [lo, hi) (integers floored; bools true where the draw is >= 0).
struct InputFill {
  double lo = -2.0;
  double hi = 2.0;
  /// When > 0 (floating inputs): every element whose index is `nonfinite_at` modulo this becomes NaN, +inf or
  /// -inf in turn (the outputs are then compared with NaN equal to NaN and infinities exactly).
  int64_t nonfinite_every = 0;
  int64_t nonfinite_at = 0;
  /// When not empty: the input's elements in order, repeated to fill its shape (instead of random draws).
  std::vector<double> values = {};
};

/// One converter test case.
struct ConverterCase {
  /// IR text of the graph (see kiln/ir/text.h). Constants without data= get random values.
  std::string ir;
  /// Input shapes per run (one vector per graph tensor input). Empty: one run at the graph's static shapes.
  std::vector<std::vector<std::vector<int64_t>>> runs;
  /// Per input (by position) fill ranges; missing entries use the default.
  std::map<size_t, InputFill> fills;
  /// fp32 tolerance (reduced-precision cases use kReducedPrecisionMaxRelError instead).
  double rtol = 1e-4;
  double atol = 1e-5;
  /// Interpreter options (input specs).
  InterpreterOptions options;
  /// Settings for the conversion (assume_dynamic_shape_support etc.) and the build (enabled_precisions).
  settings::CompilationSettings settings;
  /// An equivalent graph for the reference when libtorch 1.13 lacks an op of `ir` (same inputs; constants of
  /// the same names get the same values). Empty: `ir` itself.
  std::string reference_ir;
  /// When set (a one-input graph): the reference is this function applied in double to every element of the
  /// input, each output's elements in turn (rounded to its dtype), instead of libtorch.
  std::function<double(double)> elementwise_reference;
  /// Seed of the random inputs and weights.
  uint32_t seed = 1234;
};

/// A case with a name (a gtest parameter name: letters, digits, underscores).
struct NamedCase {
  std::string name;
  ConverterCase c;
};
using CaseList = std::vector<NamedCase>;

/// A case whose program is `graph(<inputs>) { symbol <symbol>; <body> }`, run at `runs` with `fills`.
inline NamedCase graph_case(const std::string& name, const std::string& inputs, const std::string& symbol,
                            const std::string& body, std::vector<std::vector<std::vector<int64_t>>> runs = {},
                            std::map<size_t, InputFill> fills = {}) {
  NamedCase c;
  c.name = name;
  c.c.ir = "graph(" + inputs + ") {\n  symbol " + symbol + "\n" + body + "}\n";
  c.c.runs = std::move(runs);
  c.c.fills = std::move(fills);
  return c;
}
inline void PrintTo(const NamedCase& c, std::ostream* os) { *os << c.name; }

/// Registers a family's case list for the coverage test; returns 0 (for static initialization).
int register_cases(const std::string& family, CaseList (*make)());
/// Every registered family's case-list function.
std::map<std::string, CaseList (*)()>& case_families();
/// Canonical names of the targets in a case's graph.
std::set<std::string> case_targets(const ConverterCase& c);

/// A one-input one-op graph: "graph(%x: IN) { EXTRA %y: OUT = CALL return (%y) }".
std::string one_op(const std::string& in_type, const std::string& call, const std::string& out_type,
                   const std::string& extra = "");

/// Runs a case on every backend under test and records the graph's node targets as tested; skips (GTEST_SKIP)
/// when a backend under test is not available here. Uses gtest assertions (adds failures; does not throw on a
/// mismatch). Settings enabling f16/bf16 make it a reduced-precision case (see the tolerance above).
void check_converter_case(const ConverterCase& c);

/// Canonical names of every target a check_converter_case graph contained.
std::set<std::string>& tested_targets();

/// Bound of a reduced-precision case's max relative error (max |got - want| / max |want|).
inline constexpr double kReducedPrecisionMaxRelError = 1e-2;

/// The backends converter tests run on: the names in KILN_TEST_BACKENDS (comma separated), "cpu" when unset.
std::vector<std::string> test_backends();
/// Why backend `name` cannot be created on this machine (no GPU, not built), or "" when it can (cached).
std::string backend_unavailable(const std::string& name);

/// A random tensor filled from `fill` (never constant: values are drawn from a continuous distribution;
/// integer types are floored into [lo, hi)), or `fill.values` repeated.
HostTensor random_input(DType dtype, const std::vector<int64_t>& sizes, const InputFill& fill, uint32_t seed);

}  // namespace kiln::conversion::testing

/// Declares a parameterized gtest `<Family>Converters.MatchesTorch/<case>` over the cases `make()` returns and
/// registers them for the coverage check.
#define KILN_CONVERTER_CASES(Family, make)                                                                   \
  class Family##Converters : public ::testing::TestWithParam<::kiln::conversion::testing::NamedCase> {};     \
  TEST_P(Family##Converters, MatchesTorch) { ::kiln::conversion::testing::check_converter_case(GetParam().c); } \
  INSTANTIATE_TEST_SUITE_P(Cases, Family##Converters, ::testing::ValuesIn(make()),                           \
                           [](const auto& info) { return info.param.name; });                               \
  [[maybe_unused]] static const int kiln_converter_cases_##Family =                                         \
      ::kiln::conversion::testing::register_cases(#Family, make)
