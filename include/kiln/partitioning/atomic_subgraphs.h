#pragma once
// Atomic subgraphs: operator chains that a partition boundary never cuts (the engine fuses them).
//
// Pattern language: a chain of steps separated by "->"; each step lists alternatives separated by "|"; an
// alternative names an overload ("aten.add.Tensor") or a whole packet ("aten.add"). Step k+1 must consume the
// first output of step k, and that output (and any other output of step k) must have no other user and must
// not be a graph output, so the chain's only result is its last node's outputs. Example:
//   "aten.conv2d|aten.convolution -> aten.relu|aten.silu"
// Built-ins: Conv+BatchNorm+{SiLU|GELU|ReLU|Sigmoid}, Conv+{SiLU|GELU|ReLU|Sigmoid}, Mul+Add, Mul+Mul.
// Longer patterns are matched first; a node belongs to at most one match.

#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln::partitioning {

struct AtomicPattern {
  std::string name;
  /// steps[k] = alternatives for the k-th node of the chain (at least two steps).
  std::vector<std::vector<std::string>> steps;

  /// Parses the chain text above; throws kiln::Error(InvalidInput) quoting it when malformed.
  static AtomicPattern parse(std::string name, std::string_view chain);
  /// The chain text.
  std::string to_string() const;
};

/// Adds a pattern to the process-wide list (after the built-ins).
void register_atomic_subgraph(AtomicPattern pattern);
/// Parses and registers.
void register_atomic_subgraph(std::string name, std::string_view chain);
/// Removes a registered pattern by name; returns whether one was removed.
bool unregister_atomic_subgraph(const std::string& name);
/// Every pattern, built-ins first.
std::vector<AtomicPattern> atomic_subgraphs();

/// One match of a pattern: its nodes in chain order.
struct AtomicMatch {
  std::string pattern;
  std::vector<const ir::Node*> nodes;
};

/// Finds the disjoint matches of every registered pattern in `graph` (top-level nodes only).
std::vector<AtomicMatch> find_atomic_subgraphs(const ir::Graph& graph);

}  // namespace kiln::partitioning
