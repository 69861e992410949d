#pragma once
// The part of the engine-cache key that settings contribute: every engine-invariant setting (scope Engine in
// the settings table), generated from the table, so a new engine-invariant setting joins the key by its row
// alone.

#include <string>

#include "kiln/settings/compilation_settings.h"

namespace kiln::settings {

/// One line per engine-invariant setting, in table order: `name <JSON value>`.
std::string engine_invariant_key(const CompilationSettings& settings);

}  // namespace kiln::settings
