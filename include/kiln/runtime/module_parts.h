#pragma once
// The parts of a compiled module that both runtimes share (HostModule without libtorch, CompiledModule with it):
// its built engine segments, its call spec, and what `kiln inspect` shows of its steps. No ATen here.

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/plan.h"

namespace kiln::runtime {

/// One built engine segment: the plan and how the segment's values map to the plan's bindings.
struct EngineSegment {
  /// Name of the engine segment node (kiln.engine_segment.default) in the module's graph.
  std::string node;
  std::shared_ptr<engine::Plan> plan;
  /// Per subgraph input, in order: the plan's input binding ("" for SymInt inputs the plan computes itself).
  std::vector<std::string> input_bindings;
  /// Per subgraph output, in order: the plan's output binding (SymInt outputs are Int64 [1] bindings).
  std::vector<std::string> output_bindings;
};

/// Counts of what runs where, for logs and `kiln inspect`.
struct ModuleSummary {
  size_t engine_segments = 0;
  size_t torch_runs = 0;
  /// Nodes inside engine segments / nodes left to PyTorch (top level).
  size_t engine_nodes = 0;
  size_t torch_nodes = 0;
};

/// How the caller of the exported program passes inputs and gets outputs (frontend::Program::in_spec /
/// out_spec): torch.export's serialized pytree specs, empty when unknown. The runtime only keeps and saves
/// them; the Python package flattens the caller's arguments and rebuilds the result with them.
struct CallSpec {
  std::string in_spec;
  std::string out_spec;
};

/// One step of the module in program order, for `kiln inspect`: an engine segment or a run of nodes in PyTorch.
struct SegmentInfo {
  bool engine = false;
  /// The engine segment's node, or the PyTorch run's "<first node>..<last node>".
  std::string name;
  size_t nodes = 0;
  /// Nodes per operator (canonical op names).
  std::map<std::string, size_t> ops;
};

}  // namespace kiln::runtime
