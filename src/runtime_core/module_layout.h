#pragma once
// Internal to the runtime: what both runtimes (HostModule, CompiledModule) derive from a module's graph and
// engines before running it: its steps, each engine's bindings resolved against its plan, and the slot of every
// value one execution stores. No ATen here.

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/engine/plan.h"
#include "kiln/ir/graph.h"
#include "kiln/runtime/module_parts.h"
#include "runtime_core/module_steps.h"

namespace kiln::runtime {

struct ModuleLayout {
  std::vector<ModuleStep> steps;
  /// Per engine, per segment input / output: the plan's binding (null for a SymInt input the plan computes).
  std::vector<std::vector<const engine::Binding*>> input_bindings, output_bindings;
  /// Top-level value -> slot of one execution's environment (graph inputs first, in order).
  std::unordered_map<const ir::Value*, size_t> slots;
  /// The top-level constants engine steps or graph outputs read, with their slots (PyTorch runs hold their own).
  std::vector<std::pair<size_t, const ir::Value*>> constants;

  /// Throws kiln::Error(Internal) naming the value when it has no slot.
  size_t slot(const ir::Value* v) const;
};

/// Checks `engines` against `graph` (each engine segment node has exactly one engine, with as many bindings as the
/// segment has inputs and outputs, each naming an input / output binding of its plan; every engine is used) and
/// lays the module out. Throws kiln::Error(InvalidInput) naming the node or binding on any mismatch.
ModuleLayout layout_module(const ir::Graph& graph, const std::vector<EngineSegment>& engines);

/// Counts of what runs where, and each step as `kiln inspect` shows it.
ModuleSummary summarize_steps(const std::vector<ModuleStep>& steps);
std::vector<SegmentInfo> describe_steps(const std::vector<ModuleStep>& steps);

/// Throws kiln::Error(InvalidInput) unless `kinds` is empty or names each output of `graph` "user_output" or
/// "other".
void check_output_kinds(const ir::Graph& graph, const std::vector<std::string>& kinds);
/// Indices of the graph outputs that are user outputs (every output when `kinds` is empty).
std::vector<size_t> user_outputs(const ir::Graph& graph, const std::vector<std::string>& kinds);

}  // namespace kiln::runtime
