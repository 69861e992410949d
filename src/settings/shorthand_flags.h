#pragma once
// The settings flags that are not one setting's own flag: they set several settings, or one setting inverted
// or spelt differently. The flags of single settings come from the settings table.

#include <span>
#include <string_view>

#include "kiln/settings/compilation_settings.h"

namespace kiln::settings::detail {

struct ShorthandFlag {
  std::string_view name;    // without dashes
  std::string_view values;  // value placeholder for --help, "" for a switch
  std::string_view help;
  void (*apply)(CompilationSettings& settings, std::string_view value);
};

/// Every shorthand, in --help order.
std::span<const ShorthandFlag> shorthand_flags();

}  // namespace kiln::settings::detail
