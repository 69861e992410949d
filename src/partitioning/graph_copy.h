#pragma once
// Internal helpers that copy values and nodes between graphs (partitioning builds new graphs from old ones).

#include <unordered_map>

#include "kiln/ir/graph.h"

namespace kiln::partitioning {

/// Maps values of a source graph to values of the graph being built.
using ValueMap = std::unordered_map<const ir::Value*, ir::Value*>;

/// Adds `src` (any role) as an input of `dst` with the same name, kind, meta and symbolic value.
ir::Value* copy_as_input(ir::Graph& dst, const ir::Value& src);
/// Adds the constant `src` to `dst` (same name, fqn, kind; the data is shared, not copied).
ir::Value* copy_constant(ir::Graph& dst, const ir::Value& src);
/// Creates a copy of `src` at the end of `dst` with its arguments mapped through `map` (every value it reads
/// must be mapped) and records its outputs in `map`. Names, metadata and nested subgraphs are kept.
ir::Node* copy_node(ir::Graph& dst, const ir::Node& src, ValueMap& map);
/// The argument that passes `value` by its kind (tensor, SymInt, SymFloat, SymBool).
ir::Argument argument_for(ir::Value* value);
/// Copies symbol ranges and hints.
void copy_symbols(ir::Graph& dst, const ir::Graph& src);
/// The mapped value; throws kiln::Error(Internal) naming it when unmapped.
ir::Value* mapped(const ValueMap& map, const ir::Value* value);

}  // namespace kiln::partitioning
