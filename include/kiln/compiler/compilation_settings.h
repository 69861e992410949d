#pragma once
// The compiler's name for the compilation settings, which the settings layer declares (kiln/settings/).

#include "kiln/settings/compilation_settings.h"

namespace kiln::compiler {

using settings::CompilationSettings;
using settings::default_timing_cache_path;

}  // namespace kiln::compiler
