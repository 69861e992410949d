#pragma once
// A lowering pass: a named rewrite of an ir::Graph, and the settings every pass may read.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kiln/ir/graph.h"

namespace kiln::lowering {

/// Settings that lowering passes read. A plain struct: the compiler fills it from its CompilationSettings.
struct PassContext {
  /// True when the graph is compiled for inference (dropout is removed, batch norm folds, ...).
  bool inference_mode = true;
  /// Largest tensor (in bytes) that constant folding may create; larger results stay computed at run time.
  int64_t constant_fold_max_bytes = int64_t{64} << 20;
  /// When true, every op that has a decomposition is decomposed, even ops of the keep-whole set and ops a
  /// converter takes.
  bool enable_experimental_decompositions = false;
  /// Whether some converter takes this node. Null means that no converter is known: decompositions then apply
  /// to every op outside the keep-whole set.
  std::function<bool(const ir::Node&)> has_converter;
  /// Verify the graph after every pass that changed it (always done in debug builds).
  bool verify_each_pass = false;
  /// Most rounds over one pass list before lowering stops looking for a fixpoint.
  int max_iterations = 8;
  /// Log each pass that changed the graph (at debug level) with the graph text after it.
  bool log_graph_after_pass = false;
};

/// A lowering pass. run() rewrites the graph in place and returns whether it changed anything; a pass that
/// returns false must leave the graph exactly as it was.
class Pass {
 public:
  virtual ~Pass() = default;
  /// A short snake_case name ("remove_detach"), unique in a pass list.
  virtual std::string name() const = 0;
  /// One sentence saying what the pass does (printed by `kiln passes`).
  virtual std::string description() const { return ""; }
  /// Rewrites `graph`; returns true when it changed.
  virtual bool run(ir::Graph& graph, const PassContext& context) = 0;
};

/// A pass made from a function, for passes registered at run time.
class FunctionPass : public Pass {
 public:
  using Function = std::function<bool(ir::Graph&, const PassContext&)>;
  FunctionPass(std::string name, std::string description, Function function)
      : name_(std::move(name)), description_(std::move(description)), function_(std::move(function)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return description_; }
  bool run(ir::Graph& graph, const PassContext& context) override { return function_(graph, context); }

 private:
  std::string name_;
  std::string description_;
  Function function_;
};

}  // namespace kiln::lowering
