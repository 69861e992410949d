#pragma once
// What `kiln inspect` reports about a compiled module (.kiln): the archive (format version, writer, bytes),
// the settings it was compiled with, its steps (engine segments and PyTorch runs) and each engine (device,
// layers with tactics, precisions and formats, profiles, workspace and weight bytes). docs/cli.md documents
// the JSON.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/runtime/compiled_module.h"

namespace kiln::cli {

/// Describes `module`, loaded from the .kiln at `path`, as the JSON object `kiln inspect --json` prints.
nlohmann::json describe_module(const std::string& path, const runtime::CompiledModule& module);

/// The text form of describe_module's object; `layers` adds one line per engine layer.
void print_module_text(const nlohmann::json& module, bool layers, std::ostream& out);

}  // namespace kiln::cli
