#pragma once
// Compilation settings from the keyword arguments of kiln.compile: a JSON object of setting name -> value,
// applied over the defaults. The names and JSON types are those of the settings' JSON form
// (compiler/settings_json.h).

#include <nlohmann/json.hpp>

#include "kiln/compiler/compilation_settings.h"

namespace kiln::torch_library {

/// The default settings with `overrides` applied. Throws kiln::Error(InvalidInput) naming the setting for an
/// unknown name ("unknown setting 'X'") or a value of the wrong JSON type ("setting 'X' expects a bool, got a
/// string").
compiler::CompilationSettings settings_with_overrides(const nlohmann::json& overrides);

}  // namespace kiln::torch_library
