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

/// A new module computing `module`'s graph with `new_program`'s weights; `module` is left unchanged. Throws
/// kiln::Error(InvalidInput) naming the first difference when the structures differ (an operator count, a
/// constant's name, dtype or shape), when an engine is not refittable, or when a constant that an engine holds
/// compiled in (not refittable) changed. `settings` are those the module was compiled with (lowering depends on
/// which converters they allow); the backend is the module's.
std::shared_ptr<runtime::CompiledModule> refit_module_weights(const runtime::CompiledModule& module,
                                                              const frontend::Program& new_program,
                                                              const CompilationSettings& settings = {});

}  // namespace kiln::compiler
