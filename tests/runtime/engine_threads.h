#pragma once
// The thread count a compiled module's first engine runs on, as its plan's running device names it ("... 3t").

#include <string>

#include "kiln/engine/plan.h"
#include "kiln/runtime/compiled_module.h"

namespace kiln::testing {

/// "Nt": the last word of the first engine's Plan::running_device().
inline std::string first_engine_threads(const runtime::CompiledModule& module) {
  const std::string device = module.engines().at(0).plan->running_device();
  return device.substr(device.rfind(' ') + 1);
}

}  // namespace kiln::testing
