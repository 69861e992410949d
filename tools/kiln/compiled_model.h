#pragma once
// Getting a runnable compiled module for `kiln run` / `kiln bench`: a .kiln archive is loaded, a .pt2 program is
// compiled in memory with default settings. Defined in compile_command.cpp.

#include <memory>
#include <string>

#include "kiln/frontend/program.h"
#include "kiln/runtime/compiled_module.h"

namespace kiln::cli {

/// A module and, for a .pt2, the program it came from (null for a .kiln).
struct LoadedModel {
  std::shared_ptr<runtime::CompiledModule> module;
  std::shared_ptr<frontend::Program> program;
};

/// Loads MODEL.kiln (recognized by its content) or compiles MODEL.pt2 with default settings. `threads` > 0 runs
/// the engines with that many CPU threads (0: all cores).
LoadedModel load_or_compile(const std::string& path, int threads = 0);

/// The same module with its plans re-created for `threads` CPU threads (0: all cores).
std::shared_ptr<runtime::CompiledModule> with_threads(const runtime::CompiledModule& module, int threads);

}  // namespace kiln::cli
