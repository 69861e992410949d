#pragma once
// CompilationSettings: every user-facing option of a Kiln compilation, one field per row of the settings
// table (settings_table.h), which says each field's type, default and meaning.
//
// Header-only, and it includes only the standard library, nlohmann's forward declarations and kiln/support,
// so every layer from partitioning up can take a `const settings::CompilationSettings&`.

#include <string>

#include "kiln/settings/settings_table.h"
#include "kiln/settings/value_kinds.h"
#include "kiln/support/cache_dir.h"

namespace kiln::settings {

/// The default timing cache file: <user cache dir>/timing_cache.bin, the user cache dir being
/// $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln (kiln/support/cache_dir.h); "" (no timing
/// cache) when none can be named. Never a shared directory such as /tmp, where any local user could plant a
/// FIFO that hangs every compile. The test suite points KILN_CACHE_DIR into the build tree: choices timed
/// while tests run side by side on a loaded machine must not land in the cache later compiles on that machine
/// read.
inline std::string default_timing_cache_path() {
  const std::string dir = user_cache_dir();
  return dir.empty() ? std::string() : dir + "/timing_cache.bin";
}

/// The settings of one compilation: a field per row of KILN_SETTINGS, of that row's kind and default.
struct CompilationSettings {
#define KILN_SETTING_FIELD(kind, name, default_value, flag, values, scope, help) \
  kind::Field name = default_value;
  KILN_SETTINGS(KILN_SETTING_FIELD)
#undef KILN_SETTING_FIELD
};

}  // namespace kiln::settings
