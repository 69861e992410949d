// kiln converters: the converter registry's table (target, priority, validator, dynamic shapes, output allocator).

#include <iostream>

#include "commands.h"
#include "kiln/conversion/registry.h"

namespace kiln::cli {

Action setup_converters(CLI::App& app) {
  return []() {
    std::cout << conversion::converters().display_all_available_converters();
    return kExitOk;
  };
}

}  // namespace kiln::cli
