#pragma once
// OpName: an operator's namespace, name and overload, printed "aten.conv2d.default".

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

}  // namespace kiln::ir
