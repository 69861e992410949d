#pragma once
// Saving and loading a CompiledModule (the libtorch runtime) as a .kiln archive; the format itself, and what
// needs no libtorch, is module_archive_format.h.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime/compiled_module.h"
#include "kiln/runtime/module_archive_format.h"

namespace kiln::runtime {

/// Writes `module` to `path` through a temporary file and a rename: a failed save leaves no file behind.
void save(const CompiledModule& module, const std::string& path);
/// The archive's bytes.
std::vector<uint8_t> save_to_bytes(const CompiledModule& module);

/// Loads a .kiln archive. Throws kiln::Error (naming the file) on anything malformed.
std::shared_ptr<CompiledModule> load(const std::string& path);
/// The same from bytes; `label` names them in errors.
std::shared_ptr<CompiledModule> load_from_bytes(std::vector<uint8_t> bytes, const std::string& label = "<memory>");

}  // namespace kiln::runtime
