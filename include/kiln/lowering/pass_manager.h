#pragma once
// The lowering pass manager: two ordered pass lists (pre-lowering and post-lowering, as in Torch-TensorRT),
// filled from one registration table (src/lowering/pass_table.cpp), run to a fixpoint.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/lowering/pass.h"

namespace kiln::lowering {

/// Which list a pass belongs to. Pre-lowering passes canonicalize the exported program (training IR and
/// Core ATen alike); post-lowering passes run after it (decompositions, folding, cleanup).
enum class PassStage { PreLowering, PostLowering };

const char* to_string(PassStage stage);

class PassManager {
 public:
  /// An empty manager.
  PassManager() = default;
  /// A manager holding the default passes of the registration table, in order.
  static PassManager with_default_passes();

  /// Inserts `pass` at `index` of the stage's list (at the end when index is nullopt). Throws
  /// kiln::Error(InvalidInput) when index is past the end or a pass of the same name is in the list.
  void register_pass(std::shared_ptr<Pass> pass, std::optional<size_t> index = std::nullopt,
                     PassStage stage = PassStage::PostLowering);
  /// The passes of a stage, in order.
  const std::vector<std::shared_ptr<Pass>>& passes(PassStage stage = PassStage::PostLowering) const;
  /// Removes the pass at `index` of the stage's list; throws kiln::Error(InvalidInput) when out of range.
  void remove_pass(size_t index, PassStage stage = PassStage::PostLowering);

  /// Runs the pre-lowering list, then the post-lowering list, each repeated until no pass changes the graph
  /// (at most context.max_iterations rounds). Verifies the graph after each changing pass in debug builds
  /// and when context.verify_each_pass. Returns whether anything changed. Errors from a pass are rethrown
  /// with the pass name in their message.
  bool run(ir::Graph& graph, const PassContext& context) const;

  /// The two lists as text, one pass a line: "pre  0 remove_assert_nodes  Removes ...".
  std::string describe() const;

 private:
  std::vector<std::shared_ptr<Pass>>& list(PassStage stage);
  std::vector<std::shared_ptr<Pass>> pre_;
  std::vector<std::shared_ptr<Pass>> post_;
};

/// The process-wide pass manager, filled with the default passes on first use. Users register their own
/// passes here (not thread-safe: register before compiling).
PassManager& default_pass_manager();

/// Runs the process-wide pass manager on `graph`; returns whether it changed.
bool apply_lowering_passes(ir::Graph& graph, const PassContext& context = {});

/// The process-wide pass lists as text (what `kiln passes` prints).
std::string describe_passes();

/// One entry of the default registration table.
struct PassRegistration {
  PassStage stage;
  std::shared_ptr<Pass> (*make)();
};

/// The default passes in order (defined in src/lowering/pass_table.cpp).
const std::vector<PassRegistration>& default_pass_table();

}  // namespace kiln::lowering
