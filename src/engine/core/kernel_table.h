#pragma once
// The kernel table: the seam between the engine core and kernel authors, one row type for every backend.
//
// A kernel is a KernelRow: a tactic name, the layer kind it implements, a predicate saying whether it can run
// a given layer (dtypes, ranks, params) and why not, the memory formats it runs in, a constructor, and flags.
// A backend whose kernels are table rows derives from TableBackend and gets supports / tactics / formats /
// create_kernel from its table; what remains is what is truly its own (memory, copies, its device's name).
// For each layer the backend offers, as tactics, every row of that kind whose predicate accepts the layer, in
// the backend's preference order (TacticOrder); the builder times them at the profile's opt shape and keeps
// the fastest (or takes the first, untimed). The conformance sweep (tests/engine/sweep) runs every row of
// every table against the reference implementation.
//
// Rules for kernels (see include/kiln/engine/backend.h for Kernel/KernelArgs):
//   - Tensors are dense, C-ordered, of the dtypes in LayerInfo, unless the row has a `formats` function: then
//     the builder gives the kernel tensors in the formats it returns (TensorInfo::format /
//     TensorView::format). A row with `any_format` handles whatever format it is created with (its `formats`
//     is a preference; never E4M3) or throws kiln::Error; any other row is created only with exactly the
//     formats of formats_for() (output 0 also in a format its `writes` accepts). A Reformat row reads
//     params.from and writes params.to.
//   - Weights are in layer->weights (slots per kind, documented in layers.h); prepare them in create()
//     (reorder to blocked layouts, cast, upload), never in execute().
//   - execute() is const and may run concurrently from several contexts; per-context caches go in the
//     KernelState from create_state().
//   - The semantics of every kind are those of the reference implementations in src/engine/ops/.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/backend.h"

namespace kiln::engine {

/// One row of a backend's kernel table: a tactic for one layer kind.
struct KernelRow {
  /// Tactic name, unique per kind and stable (plans store it): "ref", "onednn", "generic", "cublaslt", ...
  std::string name;
  LayerKind kind;
  /// Whether the kernel runs `layer`; when not, it may say why in `*why` (`why` may be null). Null: every
  /// layer of `kind`.
  std::function<bool(const LayerInfo& layer, std::string* why)> applies;
  /// Creates the kernel (prepares weights). Called at build (for timing) and at plan load / refit.
  std::function<std::unique_ptr<Kernel>(const LayerInfo& layer)> create;
  /// The memory formats the kernel reads each input and writes each output in (Backend::formats); null: all
  /// Plain.
  std::function<TacticFormats(const LayerInfo& layer)> formats = nullptr;
  /// Whether the kernel can also write output 0 in `format`, and the workspace bytes it then needs
  /// (Backend::writes_format); null: never. A kernel created with output 0 in such a format writes it so.
  std::function<std::optional<size_t>(const LayerInfo& layer, TensorFormat format)> writes = nullptr;
  /// Whether the kernel can also write a copy of output 0 in `format`, in the same pass and with no workspace
  /// (Backend::writes_copy); null: never. A kernel created with such copies (Layer::format_copies) writes them.
  std::function<bool(const LayerInfo& layer, TensorFormat format)> copies = nullptr;
  /// Less precise than the dtype promises (Tactic::reduced_precision).
  bool reduced_precision = false;
  /// Computes fp32 in TF32 (Tactic::tf32).
  bool tf32 = false;
  /// Computes in INT8 with the tensors' dynamic ranges (Tactic::int8).
  bool int8 = false;
  /// Computes in FP8 E4M3 with the tensors' dynamic ranges (Tactic::fp8).
  bool fp8 = false;
  /// The kernel takes its tensors in whatever formats it is created with; `formats` is only its preference.
  bool any_format = false;

  /// Whether the row runs `layer` (applies, or no predicate); when not, `*why` says why (if `why` is set).
  bool runs(const LayerInfo& layer, std::string* why) const;
  /// The formats the row runs `layer` in (what Backend::formats returns): a Reformat's params, the row's
  /// formats function, or all Plain (empty).
  TacticFormats formats_for(const LayerInfo& layer) const;
  /// The tactic the builder sees.
  Tactic tactic() const;
};

/// A row's refusal in an `applies` function: sets `*why` to `reason` (when `why` is set) and returns false.
inline bool refuse(std::string* why, const std::string& reason) {
  if (why) *why = reason;
  return false;
}

/// A backend's rows, in registration order.
class KernelTable {
 public:
  /// Adds a row; throws kiln::Error(Internal) on a duplicate (kind, name).
  void add(KernelRow row);
  /// The row (kind, name), or nullptr.
  const KernelRow* find(LayerKind kind, const std::string& name) const;
  /// Rows of layer.kind() that run `layer`, in registration order.
  std::vector<const KernelRow*> candidates(const LayerInfo& layer) const;
  /// Every row, in registration order (the conformance sweep checks that each is exercised).
  const std::vector<KernelRow>& rows() const { return rows_; }

 private:
  std::vector<KernelRow> rows_;
};

/// The order a TableBackend offers the rows that apply to a layer, best guess first.
enum class TacticOrder {
  Registration,        // the first registered first (cuda: each family registers its best guess first)
  LastRegisteredFirst  // the last registered first (cpu: fast kernels are registered after the reference)
};

/// A backend whose kernels are the rows of a KernelTable: supports, tactics, formats and create_kernel come
/// from the table; a derived backend adds its device, memory and whatever else is its own.
class TableBackend : public Backend {
 public:
  /// Every row of `table` (alive as long as the backend; a process-wide table) offered in `order`.
  TableBackend(const KernelTable& table, TacticOrder order) : table_(table), order_(order) {}
  /// True when a row of the layer's kind runs it; otherwise `why` lists each row's reason ("<row>: <why>"),
  /// or says that the backend has no kernel of that kind.
  bool supports(const LayerInfo& layer, std::string* why) const override;
  std::vector<Tactic> tactics(const LayerInfo& layer) const override;
  /// Each row of the layer's kind but `reference` that refuses it, with its reason ("<row>: <why>; ..."), or
  /// that there is no such row.
  std::string refusals(const LayerInfo& layer, const std::string& reference) const override;
  /// The row's formats_for(layer); all Plain for an unknown tactic.
  TacticFormats formats(const LayerInfo& layer, const std::string& tactic) const override;
  std::optional<size_t> writes_format(const LayerInfo& layer, const std::string& tactic,
                                      TensorFormat format) const override;
  bool writes_copy(const LayerInfo& layer, const std::string& tactic, TensorFormat format) const override;
  /// Checks that the row exists and runs the layer, and that the layer's tensors are in the row's formats
  /// (unless it takes any format); throws kiln::Error(Unsupported / InvalidInput) naming the layer otherwise.
  std::unique_ptr<Kernel> create_kernel(const LayerInfo& layer, const std::string& tactic) const override;
  /// The table this backend offers.
  const KernelTable& kernels() const { return table_; }

 private:
  const KernelTable& table_;
  TacticOrder order_;
};

}  // namespace kiln::engine
