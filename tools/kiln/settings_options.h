#pragma once
// The compilation-settings flags (settings::settings_flags(), generated from the settings table) declared on
// a subcommand, shared by `kiln compile`, `kiln refit` and `kiln inspect --coverage`.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "kiln/settings/compilation_settings.h"

namespace kiln::cli {

/// The flags as given, in order, applied after parsing.
using SettingsFlags = std::vector<std::pair<std::string, std::string>>;

/// Declares every settings flag on `app`; each occurrence is appended to `flags`.
void add_settings_flags(CLI::App& app, const std::shared_ptr<SettingsFlags>& flags);
/// Applies the flags to `settings`; throws kiln::Error(InvalidInput) on a bad value or an operator name in
/// --torch-executed-ops that Kiln does not know.
void apply_settings_flags(settings::CompilationSettings& settings, const SettingsFlags& flags);

}  // namespace kiln::cli
