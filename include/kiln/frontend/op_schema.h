#pragma once
// The op-schema table: for each operator Kiln knows, its arguments in schema order with their defaults and
// its returns. The frontend uses it to fill the arguments torch.export omits (those equal to their
// defaults), so every later layer sees each known op's node with all of its arguments in schema order.
//
// Schemas are written as PyTorch schema strings, e.g.
//   "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0,
//    SymInt[2] dilation=1, SymInt groups=1) -> Tensor"
// and parsed once at startup (src/frontend/op_schema_table.cpp holds the list).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/op_name.h"

namespace kiln::frontend {

/// One argument of an operator schema.
struct SchemaArgument {
  std::string name;
  /// The type as written, alias annotations removed: "Tensor", "Tensor?", "SymInt[2]", "int[1]?", "Scalar".
  std::string type;
  /// The default as an IR argument (lists of fixed length are expanded: "SymInt[2] stride=1" gives [1, 1]).
  std::optional<ir::Argument> default_value;
  /// The default as the schema wrote it ("1", "None", "'none'", "contiguous_format"); empty when none.
  std::string default_text;
  /// True for arguments after "*" (keyword-only).
  bool kwarg_only = false;

  bool has_default() const { return default_value.has_value(); }
  /// True when the type is optional ("Tensor?", "int[1]?").
  bool is_optional() const { return !type.empty() && type.back() == '?'; }
};

/// A parsed operator schema.
struct OpSchema {
  ir::OpName op;  // aten.conv2d.default (overload "default" when the schema names none)
  std::vector<SchemaArgument> arguments;
  std::vector<std::string> returns;  // return types: {"Tensor"}, {"Tensor", "Tensor"}, {"Tensor[]"}, {}

  /// The argument named `name`, or nullptr.
  const SchemaArgument* find_argument(std::string_view name) const;
  /// Position of the argument named `name` in schema order, or -1.
  int index_of(std::string_view name) const;
  /// Number of returns ("-> (Tensor, Tensor)" has 2, "-> ()" has 0).
  size_t num_returns() const { return returns.size(); }
  /// True when the op returns one list of tensors ("-> Tensor[]"): in Kiln's IR, such a node has one output
  /// Value per list element, in order.
  bool returns_list() const;
  /// The schema text again, in PyTorch's form ("aten::conv2d(Tensor input, ...) -> Tensor").
  std::string to_string() const;
};

/// Parses a PyTorch schema string. Throws kiln::Error(InvalidInput) quoting the text on a syntax error.
OpSchema parse_op_schema(std::string_view text);

/// The schema of `op` in Kiln's table, or nullptr when Kiln's table lacks it.
const OpSchema* find_op_schema(const ir::OpName& op);
/// Every schema in the table, in table order.
const std::vector<OpSchema>& known_op_schemas();

/// Puts `node`'s arguments in schema order and adds every omitted argument that has a default, with the
/// schema's kwarg_only flags. Throws kiln::Error(InvalidInput) naming node and argument when a required
/// argument (one without a default) is absent. Arguments the schema does not name are kept, after the
/// others, with a warning (an archive from a newer torch may carry arguments Kiln's table lacks).
void normalize_arguments(ir::Node& node, const OpSchema& schema);

/// Looks `node`'s target up in the table and normalizes its arguments when found; returns whether it was.
bool fill_default_arguments(ir::Node& node);

}  // namespace kiln::frontend
