// kiln passes: the lowering pipeline in order (pre-lowering and post-lowering passes), the decompositions and
// the ops kept whole.

#include <iostream>

#include "commands.h"
#include "kiln/lowering/pass_manager.h"

namespace kiln::cli {

Action setup_passes(CLI::App& app) {
  return []() {
    std::cout << lowering::describe_passes();
    return kExitOk;
  };
}

}  // namespace kiln::cli
