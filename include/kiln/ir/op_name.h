#pragma once
// OpName: an operator's namespace, name and overload, printed "aten.conv2d.default".

#include <set>
#include <string>
#include <string_view>

namespace kiln::ir {

struct OpName {
  std::string ns;        // "aten", "prims", "_operator", "operator", "kiln"
  std::string name;      // "conv2d", "mul", "getitem"
  std::string overload;  // "default", "Tensor", "int"; empty for Python operators ("_operator.mul")

  /// Parses "torch.ops.aten.conv2d.default", "aten.conv2d.default", "aten::conv2d.default", "_operator.mul",
  /// "operator.getitem". Throws kiln::Error(InvalidInput) on an empty or malformed name.
  static OpName parse(std::string_view text);
  /// "aten.conv2d.default" (or "_operator.mul").
  std::string to_string() const;
  /// "aten.conv2d" (the overload packet).
  std::string packet() const;
  /// "aten::conv2d" as libtorch's dispatcher names it.
  std::string qualified_name() const;
  /// True for Python operator nodes ("_operator.mul", "operator.getitem", "math.ceil", "builtins.*").
  bool is_python_operator() const;

  bool operator==(const OpName&) const = default;
  auto operator<=>(const OpName&) const = default;
};

/// True for the namespaces of Python callables, which have no overloads ("_operator", "operator", "math",
/// "builtins", "torch").
bool is_python_namespace(std::string_view ns);

/// The canonical spelling of an operator namespace: "operator" is written "_operator"; others stay.
std::string canonical_op_namespace(std::string_view ns);

/// Rewrites the spellings users and exporters give an operator into the canonical one: strips "torch.ops.",
/// writes "aten::add.Tensor" as "aten.add.Tensor" and "operator.getitem" as "_operator.getitem". No
/// validation.
std::string normalize_op_spelling(std::string_view text);

/// The overload packet in canonical spelling: "aten.add", "_operator.getitem".
std::string canonical_op_packet(const OpName& op);

/// Canonical text of an operator name for registry keys and op sets: "aten.add.Tensor", "_operator.getitem"
/// (namespace "operator" is spelled "_operator").
std::string canonical_op_name(const OpName& op);

/// True when `op` is named in `ops`, by overload ("aten.add.Tensor") or packet ("aten.add"); entries may be
/// spelled "torch.ops.aten.add.Tensor" or "aten::add.Tensor".
bool op_in_set(const OpName& op, const std::set<std::string>& ops);

}  // namespace kiln::ir
