#include "commands.h"

namespace kiln::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"inspect", "Show a .pt2 program's inputs, outputs, symbols, parameters and operators", setup_inspect},
      {"run",
       "Run a .pt2 program or .kiln module on inputs from an .npz file and compare with reference outputs",
       setup_run},
      {"compile", "Compile a .pt2 program into a .kiln module (engines + PyTorch fallback)", setup_compile},
      {"refit", "Refit a compiled .kiln module with the weights of another export of the same architecture",
       setup_refit},
      {"bench", "Time a compiled module against libtorch eager on the same inputs", setup_bench},
      {"passes", "List the lowering passes in order, the decompositions and the ops kept whole",
       setup_passes},
      {"converters", "List the registered converters", setup_converters},
      {"cache", "Show (list) or clear the engine cache and the timing cache", setup_cache},
  };
  return table;
}

}  // namespace kiln::cli
