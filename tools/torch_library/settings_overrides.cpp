#include "settings_overrides.h"

#include <string>

#include "compiler/settings_json.h"
#include "kiln/support/error.h"

namespace kiln::torch_library {
namespace {

// The JSON type a setting's value must have, named as Python users know it.
const char* type_name(const nlohmann::json& value) {
  if (value.is_boolean()) return "a bool";
  if (value.is_number_integer()) return "an int";
  if (value.is_number()) return "a float";
  if (value.is_string()) return "a str";
  if (value.is_array()) return "a list";
  if (value.is_null()) return "None";
  return "a dict";
}

bool accepts(const nlohmann::json& default_value, const nlohmann::json& value) {
  // Optional integers (cpu_memory_budget) are null by default.
  if (default_value.is_null()) return value.is_null() || value.is_number_integer();
  if (default_value.is_number_integer()) return value.is_number_integer();
  if (default_value.is_array()) {
    if (!value.is_array()) return false;
    for (const nlohmann::json& e : value) {
      if (!e.is_string()) return false;
    }
    return true;
  }
  return default_value.type() == value.type();
}

}  // namespace

compiler::CompilationSettings settings_with_overrides(const nlohmann::json& overrides) {
  KILN_CHECK(overrides.is_object(), InvalidInput, "settings: expected a JSON object, got ",
             type_name(overrides));
  nlohmann::json settings = compiler::detail::settings_to_json(compiler::CompilationSettings{});
  for (const auto& [name, value] : overrides.items()) {
    auto it = settings.find(name);
    if (it == settings.end()) {
      std::string known;
      for (const auto& [key, unused] : settings.items()) known += (known.empty() ? "" : ", ") + key;
      KILN_FAIL(InvalidInput, "unknown setting '", name, "' (settings: ", known, ")");
    }
    const char* expected = it->is_null() ? "an int or None" : type_name(*it);
    if (it->is_array()) expected = "a list of str";
    KILN_CHECK(accepts(*it, value), InvalidInput, "setting '", name, "' expects ", expected, ", got ",
               type_name(value));
    *it = value;
  }
  return compiler::detail::settings_from_json(settings);
}

}  // namespace kiln::torch_library
