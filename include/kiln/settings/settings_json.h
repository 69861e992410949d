#pragma once
// CompilationSettings to and from JSON: one key per setting, its field name; generated from the settings
// table. Used for archives that keep the settings they were compiled with (MutableModule::save) and by the
// Python binding (keyword arguments by name).

#include <string_view>

#include <nlohmann/json.hpp>

#include "kiln/settings/compilation_settings.h"

namespace kiln::settings {

/// Every setting, by name.
nlohmann::json settings_to_json(const CompilationSettings& settings);
/// Reads a JSON object; settings it leaves out keep their defaults. Throws kiln::Error(InvalidInput) naming
/// the key on an unknown key, and naming the key and the expected type on a value of the wrong type or out of
/// range.
CompilationSettings settings_from_json(const nlohmann::json& json);

/// Sets one setting from its JSON form; throws as settings_from_json does (unknown name, wrong type).
void set_setting(CompilationSettings& settings, std::string_view name, const nlohmann::json& value);
/// One setting's JSON form; throws kiln::Error(InvalidInput) on an unknown name.
nlohmann::json get_setting(const CompilationSettings& settings, std::string_view name);

}  // namespace kiln::settings
