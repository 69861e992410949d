#pragma once
// Internal: what the argument checks (op_checks.cpp, op_family_checks.cpp) share: reading a node's arguments
// and tensor metadata, and failing with the node, op and argument named.

#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/support/error.h"

namespace kiln::frontend::checks {

/// A node under check.
class NodeView {
 public:
  explicit NodeView(const ir::Node& node) : node_(node) {}
  const ir::Node& node() const { return node_; }

  /// Throws InvalidInput: "argument 'arg' of op: what" with the node and op as context.
  [[noreturn]] void fail(const std::string& arg, const std::string& what) const;

  /// The argument when present and not None.
  const ir::Argument* arg(const std::string& name) const;
  /// The argument's value when it is a compile-time int (Int or a constant SymInt).
  std::optional<int64_t> int_(const std::string& name) const;
  /// Each element when the argument is a list of compile-time ints (Ints, constant SymInts, or one Int).
  std::optional<std::vector<int64_t>> ints(const std::string& name) const;
  /// Per element of an int-list argument: its value, or nullopt for a symbolic element; nullopt for the whole
  /// list when the argument is absent or not an int list.
  std::optional<std::vector<std::optional<int64_t>>> maybe_ints(const std::string& name) const;
  /// The metadata of a Tensor argument (nullptr when absent, None or not a single tensor).
  const ir::TensorMeta* tensor(const std::string& name) const;
  /// The first tensor argument (a Tensor, or the first element of a tensor list), or nullptr.
  const ir::TensorMeta* first_tensor() const;

 private:
  const ir::Node& node_;
};

/// A static size (nullopt when symbolic).
std::optional<int64_t> static_dim(const ir::TensorMeta& meta, int64_t d);

/// Checks that `dim` lies in [-rank, rank) (rank 0 takes dims as if it were 1, as torch's maybe_wrap_dim does)
/// and returns it wrapped to [0, rank).
int64_t wrap_dim(const NodeView& v, const std::string& arg, int64_t dim, int64_t rank);

/// The op family's rules (op_family_checks.cpp).
void check_family(const NodeView& v);

}  // namespace kiln::frontend::checks
