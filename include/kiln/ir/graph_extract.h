#pragma once
// Copying values, nodes and subgraphs between graphs: the one home of what partitioning (segments,
// flattening), the compiler (inlining failed segments, the engine cache's canonical graph) and the runtime
// (PyTorch runs) copy.

#include <memory>
#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::ir {

/// Maps values of a source graph to the values standing for them in the graph being built.
using ValueMap = std::unordered_map<const Value*, Value*>;

/// Adds `src` (any role) as an input of `dst` with the same name, kind, meta and symbolic value.
Value* copy_as_input(Graph& dst, const Value& src);
/// Adds the constant `src` to `dst` (same name, fqn, kind and meta; the data is shared, not copied).
Value* copy_constant(Graph& dst, const Value& src);
/// Creates a copy of `src` at the end of `dst` with its arguments mapped through `map` (every value it reads
/// must be mapped) and records its outputs in `map`. Names, metadata and nested subgraphs (shared) are kept.
Node* copy_node(Graph& dst, const Node& src, ValueMap& map);
/// The mapped value; throws kiln::Error(Internal) naming it when unmapped (read before it is defined).
Value* mapped(const ValueMap& map, const Value* value);
/// The argument that passes `value` by its kind (tensor, SymInt, SymFloat, SymBool).
Argument argument_for(Value* value);
/// Copies symbol ranges and hints.
void copy_symbols(Graph& dst, const Graph& src);
/// Starts a copy of `src` in the empty `dst`: symbol ranges and hints, every input, every constant; returns the map
/// from `src`'s values to their copies.
ValueMap copy_inputs_and_constants(Graph& dst, const Graph& src);
/// Sets `dst`'s outputs to the values standing for `src`'s outputs (every one must be mapped).
void copy_outputs(Graph& dst, const Graph& src, const ValueMap& map);

/// Nodes of a graph copied into a graph of their own.
struct ExtractedGraph {
  std::shared_ptr<Graph> graph;
  /// The source graph's values the copy takes as inputs (same names), in order of first use; constants are
  /// not among them: the copy holds the constants its nodes read (sharing their data).
  std::vector<const Value*> inputs;
  /// The source graph's values the copy returns, in node order: outputs of the nodes that a node outside them
  /// reads or that are outputs of the source graph.
  std::vector<const Value*> outputs;
};

/// Copies `nodes` (top-level nodes of `graph`, in program order) into a graph of their own: its inputs are
/// the non-constant values the nodes read from outside them, its constants those they read, then the nodes
/// (names, metadata and nested subgraphs kept), its outputs as ExtractedGraph says; symbol ranges and hints
/// are copied. `uses` is `graph`'s use map.
ExtractedGraph extract_subgraph(const Graph& graph, const std::vector<const Node*>& nodes,
                                const UseMap& uses);

/// A copy of `graph` that keeps only structure, op targets, arguments, dtypes and shapes: values named v0,
/// v1, ... in definition order (inputs, constants, then node outputs), nodes n0, n1, ..., constants without
/// data whose fqn is their state-dict name (else their value name), no metadata, nested subgraphs copied the
/// same way, symbol ranges and hints kept. Printed, it is what the engine cache hashes
/// (compiler/engine_hash.h).
std::unique_ptr<Graph> canonical_copy(const Graph& graph);

}  // namespace kiln::ir
