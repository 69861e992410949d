#pragma once
// The backend-conformance sweep (docs/engine.md, "Backend conformance sweep"): one list of generated
// one-layer cases, run through every tactic a backend offers for each case (in the formats the tactic asks
// for) and compared with the engine's reference implementation (src/engine/ops). A registered kernel
// row that no case exercises fails the sweep, so a new row cannot land without a case that checks it.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/kernel_table.h"
#include "kiln/engine/backend.h"
#include "kiln/engine/network.h"

namespace kiln::engine::sweep {

/// How the driver fills one layer input: values drawn uniformly from [lo, hi), then converted to `dtype`
/// (integer dtypes take the floor, Bool is value >= 1, so [0, 2) gives both truth values).
struct InputSpec {
  DType dtype = DType::Float32;
  Dims dims;
  double lo = -1.0, hi = 1.0;
  /// The format the input is in when the driver asks the backend which tactics apply and which formats they
  /// want (the format its producer writes; a pooling tactic keeps whatever it is given).
  TensorFormat offered = TensorFormat::Plain;
  /// When > 0 (floating dtypes): every `nonfinite_every`-th element, from element 1, is NaN, +inf, -inf in
  /// turn.
  int64_t nonfinite_every = 0;
};

/// One generated layer. `layer` holds the kind, params and weights; the driver adds the inputs (a network
/// input per spec) and validates the layer through Network::add_layer, so a malformed case fails loudly.
struct SweepCase {
  std::string name;  // unique, "<what>" (the driver prefixes the kind)
  Layer layer;
  std::vector<InputSpec> inputs;
  /// Other input dims (one Dims per input) the same kernel also runs at, as under a dynamic profile: the
  /// kernel is created for the range they span with InputSpec::dims as the opt shape, and runs at the opt
  /// dims, at each of these, then at the opt dims again (with one KernelState, as one execution context
  /// would).
  std::vector<std::vector<Dims>> also_run{};
  /// Made from another case by add_half_precision_variants: when the network rejects it (a kind that takes no
  /// half-precision input there), that is a note, not a failure.
  bool derived = false;
};

/// The case list (sweep_cases_*.cpp, one file per family; sweep_cases.cpp joins them).
std::vector<SweepCase> sweep_cases();
void add_linalg_cases(std::vector<SweepCase>& cases);  // convolution, matrix multiply, attention
void add_pointwise_cases(
    std::vector<SweepCase>& cases);  // elementwise, activation, unary, cast, select, fused
void add_reduction_cases(std::vector<SweepCase>& cases);  // reduce, softmax, normalization, cumulative, topk
void add_movement_cases(std::vector<SweepCase>& cases);   // the rest: shuffle, concat, slice, pooling, ...
void add_dynamic_cases(std::vector<SweepCase>& cases);    // a range of input dims per kernel (also_run)
void add_nonfinite_cases(std::vector<SweepCase>& cases);  // NaN and infinities in the inputs
void add_larger_cases(std::vector<SweepCase>& cases);     // past one vector / one oneDNN block
void add_edge_cases(std::vector<SweepCase>& cases);       // at the edges of each kind's semantics
/// Adds an f16 and a bf16 copy ("<name>@f16", "<name>@bf16") of every case whose inputs are f32 (and Bool),
/// except the kinds whose dtypes are params or only moved, and the larger cases.
void add_half_precision_variants(std::vector<SweepCase>& cases);

// ---- Helpers for writing cases ----

/// A layer of `kind` with `params` and weights.
Layer make_layer(LayerKind kind, LayerParams params, std::vector<Weights> weights = {});
/// Deterministic fp32 weights uniform in [-1, 1) (seeded by `seed`).
Weights random_weights(const Dims& dims, uint32_t seed);
/// A float input in [-1, 1) (or [lo, hi)).
InputSpec in(const Dims& dims, DType dtype = DType::Float32, double lo = -1.0, double hi = 1.0);
/// An integer input with values in [lo, hi).
InputSpec ints(const Dims& dims, DType dtype, int64_t lo, int64_t hi);
/// A Bool input with both values.
InputSpec bools(const Dims& dims);
/// `x` as its producer writes it in `format` (see InputSpec::offered).
InputSpec offered(InputSpec x, TensorFormat format);
/// Pooling params with dilation 1 (window, stride and paddings: one entry per spatial dim).
PoolingParams pooling(PoolingParams::Kind kind, std::vector<int64_t> window, std::vector<int64_t> stride,
                      std::vector<int64_t> pre, std::vector<int64_t> post);
/// An activation post-op (of a convolution or matrix multiply).
PostOp activation_post_op(ActivationKind kind, double alpha = 0, double beta = 0);

/// A kernel row of a backend: (layer kind, tactic name).
using RowId = std::pair<LayerKind, std::string>;
/// The rows `backend` ("cpu", "cuda") registers (sweep_rows.cpp).
std::vector<RowId> registered_rows(const std::string& backend);
/// Rows that may legitimately apply to no case on some machines, with the reason (e.g. an implementation
/// oneDNN has only for some instruction sets). They are reported, never silently: see sweep_test.cpp.
std::vector<std::pair<RowId, std::string>> hardware_dependent_rows(const std::string& backend);

/// Narrows a sweep to one kind / tactic / case (the environment variables KILN_SWEEP_KIND, KILN_SWEEP_TACTIC,
/// KILN_SWEEP_CASE: a kind name as layer_kind_name spells it, a tactic name, a substring of case names).
struct SweepFilter {
  std::string kind, tactic, case_name;
  static SweepFilter from_environment();
  bool active() const { return !kind.empty() || !tactic.empty() || !case_name.empty(); }
};

/// What a sweep did.
struct SweepReport {
  std::set<RowId> exercised;                      // rows that ran at least one case and were compared
  std::map<RowId, std::set<std::string>> dtypes;  // per exercised row: the dtypes of the outputs it computed
  int64_t runs = 0;                               // (tactic, case) pairs run
  std::vector<std::string> failures;              // one line each: case, tactic, what differed
  std::vector<std::string> notes;                 // unsupported cases, tactics refusing at creation
  std::vector<std::string> log;                   // one line per run: case, tactic, formats
};

/// The registered rows that `report` did not exercise and that may not be excused: all of them unless the
/// run was filtered (then none) or the row is hardware dependent (reported by the caller instead).
std::vector<RowId> unexercised_rows(const std::vector<RowId>& rows, const SweepReport& report,
                                    const SweepFilter& filter,
                                    const std::vector<std::pair<RowId, std::string>>& hardware_dependent);

/// Runs `c` on every tactic `backend` offers for it (narrowed by `filter`) and compares each with the
/// reference; adds to `report`.
void run_case(const Backend& backend, const SweepCase& c, const SweepFilter& filter, SweepReport& report);

/// The rows of a table that refuse cases: how many (row, case) refusals, and those without a reason.
struct Refusals {
  int64_t count = 0;
  std::vector<std::string> silent;  // "<kind>/<case> [<row>]", one per refusal that left `why` empty
};
/// Asks every row of `table` of the case's kind whether it runs the case's layer (KernelRow::runs with a
/// `why`); adds each refusal to `refusals`. A case that is no valid layer is skipped.
void collect_refusals(const KernelTable& table, const SweepCase& c, Refusals& refusals);

}  // namespace kiln::engine::sweep
