#pragma once
// Descriptors of the compilation settings, generated from the settings table: what a front end (the Python
// binding's keyword arguments, documentation, a settings file checker) needs to name, check and document each
// setting without knowing the C++ struct. Read and write values by name with get_setting/set_setting
// (settings_json.h).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::settings {

struct SettingDescriptor {
  /// The field name: JSON key and Python keyword argument.
  std::string name;
  /// The value's type in Python's spelling: "bool", "int", "optional[int]", "str" or "list[str]".
  std::string type;
  /// The default value in its JSON form (as settings_to_json writes it).
  nlohmann::json default_value;
  /// One line of help.
  std::string help;
  /// The allowed values of a "str" setting or of each element of a "list[str]" one; empty when any value
  /// goes.
  std::vector<std::string> choices;
  /// The command-line flag with its dashes ("--min-block-size"), "" when the setting has none.
  std::string flag;
  /// Part of the engine-cache key: changing it changes the engines built.
  bool engine_invariant = false;
  /// Changes only how the compiled module runs, never what is compiled.
  bool runtime_only = false;
};

/// One descriptor per setting, in table order. Defaults are those of a CompilationSettings made now (the
/// timing cache path follows the environment).
std::vector<SettingDescriptor> descriptors();

}  // namespace kiln::settings
