#pragma once
// Internal to the runtime layer: splits a partitioned graph into the steps a CompiledModule runs (engine segments
// and runs of consecutive PyTorch nodes, each run copied into a graph of its own). No ATen here.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::runtime {

/// One step of a compiled module, in program order.
struct ModuleStep {
  /// Engine segment: the node and its index in the module's engine list. Null node for a PyTorch run.
  const ir::Node* segment = nullptr;
  size_t engine_index = 0;
  /// PyTorch run: the run's nodes copied into a graph whose inputs are `inputs` (same names) and whose outputs
  /// are `outputs`; the top-level constants it reads are its own constants (sharing their data).
  std::shared_ptr<ir::Graph> torch_graph;
  /// Top-level values the step reads / writes, in the order the step takes / gives them.
  std::vector<const ir::Value*> inputs;
  std::vector<const ir::Value*> outputs;
  /// Top-level values no later step (nor the graph outputs) reads: dropped after this step.
  std::vector<const ir::Value*> last_uses;
  /// Number of nodes the step runs.
  size_t num_nodes = 0;
};

/// The name of the step at `index`: an engine step's segment node, a PyTorch run's first and last node
/// ("<first>..<last>", or the one node's name).
std::string step_name(const ModuleStep& step, size_t index);

/// Splits `graph` into steps. `engine_index` maps engine segment node names to their index in the module's
/// engine list; a segment missing from it is a kiln::Error(InvalidInput).
std::vector<ModuleStep> plan_module_steps(const ir::Graph& graph, const std::map<std::string, size_t>& engine_index);

}  // namespace kiln::runtime
