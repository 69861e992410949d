#pragma once
// Capability queries: can a node run in an engine, and how much of a graph can.
//
// A node is engine-capable (partitioning page) when its target is not in settings.torch_executed_ops, it is
// not impure, and the converter registry lookup finds a converter whose validator and dynamic-shape rule pass.
// Python operator nodes (getitem, SymInt arithmetic) and aten.sym_size are ordinary nodes here: they are
// supported exactly when a converter is registered for them (Torch-TensorRT registers converters for them).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/settings/compilation_settings.h"
#include "kiln/conversion/registry.h"
#include "kiln/ir/graph.h"

namespace kiln::partitioning {

/// Why a node is or is not engine-capable.
enum class SupportStatus {
  Supported, NoConverter, ValidatorRejected, TorchExecuted, DynamicShapes, Impure,
  HigherOrder,         // a higher-order op (cond, while_loop, map_impl, ...): control flow in Kiln's runtime
  UnsupportedArgument,  // the frontend could not read one of the node's arguments (ir::kUnsupportedArgumentKey)
  PrecisionConstraint   // from a region that turns autocast off, in a build that may lower precision: PyTorch
                        // keeps it in the dtype it was exported in
};

/// "supported", "no converter", "validator rejected", "in torch_executed_ops", "dynamic shapes", "impure",
/// "higher-order op", "unsupported argument", "precision constraint".
const char* to_string(SupportStatus status);

/// The answer of is_node_supported.
struct NodeSupport {
  bool supported = false;
  SupportStatus status = SupportStatus::NoConverter;
  /// A sentence for unsupported nodes (empty when supported).
  std::string reason;
};

/// True for operators with side effects that must stay in PyTorch: assertions (aten._assert_async,
/// aten._assert_scalar, aten._assert_tensor_metadata), range constraints (aten.sym_constrain_range*), printing
/// and profiling hooks, RNG state changes, and every in-place or out= variant (a name ending in "_" such as
/// aten.add_.Tensor, or an "out" overload), since those write to tensors the engine does not own.
bool is_impure_op(const ir::OpName& op);

/// True for nodes counted by min_block_size: everything except Python operators (getitem, SymInt arithmetic),
/// aten.sym_size/sym_numel/sym_stride/sym_storage_offset and aten.view, which do no tensor compute.
bool is_compute_node(const ir::Node& node);

/// Decides whether `node` can run in an engine (see the file comment).
NodeSupport is_node_supported(const ir::Node& node, const settings::CompilationSettings& settings,
                              const conversion::ConverterRegistry& registry = conversion::converters());

/// Per-operator counts.
struct OpSupport {
  int64_t supported = 0;
  int64_t unsupported = 0;
  /// The reason given for the first unsupported node of this op.
  std::string reason;
};

/// One unsupported node.
struct UnsupportedNode {
  std::string node;
  std::string op;
  SupportStatus status = SupportStatus::NoConverter;
  std::string reason;
};

/// Converter coverage of a graph (engine segments of a partitioned graph are looked into).
struct GraphSupport {
  int64_t supported = 0;
  int64_t total = 0;
  /// Keyed by canonical op name ("aten.relu.default").
  std::map<std::string, OpSupport> per_op;
  /// In program order.
  std::vector<UnsupportedNode> unsupported;

  /// "N/M ops supported" followed by a per-op table.
  std::string to_string() const;
};

/// Runs is_node_supported on every node.
GraphSupport get_graph_converter_support(const ir::Graph& graph, const settings::CompilationSettings& settings,
                                         const conversion::ConverterRegistry& registry = conversion::converters());

}  // namespace kiln::partitioning
