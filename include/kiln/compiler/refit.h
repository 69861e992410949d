#pragma once
// Refitting a compiled module with another program's weights (Torch-TensorRT's refit_module_weights): the new
// program must have the module's structure (same architecture, other weight values). It is lowered as compile()
// lowers (batch norms folded, constants folded), then every engine is refitted from the new constants and every
// constant the PyTorch-run nodes read is replaced. The engines must have been built refittable
// (immutable_weights=false, `kiln compile --refittable`).

#include <memory>

#include "kiln/compiler/compilation_settings.h"
#include "kiln/frontend/program.h"
#include "kiln/runtime/compiled_module.h"

namespace kiln::compiler {

/// A new module computing `module`'s graph with `new_program`'s weights; `module` is left unchanged. The new
/// program, lowered and partitioned as the module is, must equal the module's graph in everything the engine
/// cache hashes (engine_hash.h): every node's target and arguments (a dim, an eps), the data flow (which constant
/// a node reads, a bias present or not), dtypes, shapes and constant names, engine segment by engine segment and
/// in the PyTorch-run nodes. Throws kiln::Error(InvalidInput) naming the first difference (the segment and the
/// differing line of each graph's text) when they differ, when an engine is not refittable, or when a constant
/// that an engine holds compiled in (not refittable) changed. `settings` are those the module was compiled with (lowering depends on
/// which converters they allow); the backend is the module's.
std::shared_ptr<runtime::CompiledModule> refit_module_weights(const runtime::CompiledModule& module,
                                                              const frontend::Program& new_program,
                                                              const CompilationSettings& settings = {});

}  // namespace kiln::compiler
