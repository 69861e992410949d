#pragma once
// The compilation-settings flags shared by `kiln compile`, `kiln inspect --coverage` and `kiln refit`, parsed
// from key/value strings so that any command line front end can declare them (tools/kiln declares them on
// CLI11). The flags of the settings table's rows come first, in table order, then the shorthands that set
// several settings or invert one (--partitioner, --cpu-memory-budget, --cache-dir, --no-cache, --refittable).
// docs/cli.md lists them all.

#include <string>
#include <string_view>
#include <vector>

#include "kiln/settings/compilation_settings.h"

namespace kiln::settings {

struct SettingsFlag {
  /// With its dashes: "--min-block-size".
  std::string name;
  /// The value placeholder for --help ("N", "cpu|cuda"); "" for a switch.
  std::string values;
  std::string help;
  /// Takes no value.
  bool is_switch = false;
};

/// Every settings flag.
std::vector<SettingsFlag> settings_flags();
/// Applies one flag. `key` may be written with or without leading dashes and with '_' or '-'. Returns false
/// when `key` is not a settings flag; throws kiln::Error(InvalidInput) naming the flag on a bad value.
/// Switches take no value ("") or one of true/false/1/0/yes/no/on/off.
bool apply_settings_flag(CompilationSettings& settings, std::string_view key, std::string_view value);
/// True when the flag is a switch (takes no value).
bool is_settings_switch(std::string_view key);

}  // namespace kiln::settings
