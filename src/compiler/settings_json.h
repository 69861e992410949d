#pragma once
// CompilationSettings to and from JSON (every field, by its name), for archives that keep the settings they were
// compiled with (MutableModule::save).

#include <nlohmann/json.hpp>

#include "kiln/compiler/compilation_settings.h"

namespace kiln::compiler::detail {

nlohmann::json settings_to_json(const CompilationSettings& settings);
/// Throws kiln::Error(InvalidInput) naming the field on a missing or mistyped one.
CompilationSettings settings_from_json(const nlohmann::json& json);

}  // namespace kiln::compiler::detail
