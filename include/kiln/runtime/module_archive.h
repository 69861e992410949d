#pragma once
// The .kiln archive: a compiled module on disk, laid out in the .pt2 style (a zip whose entries sit under one
// top-level folder, stored uncompressed and 64-byte aligned):
//
//   kiln_module/archive_format        "kiln"
//   kiln_module/archive_version       kModuleFormatVersion as text
//   kiln_module/module.json           {"format_version", "kiln_version", "backend", "graph": entry,
//                                      "output_kinds": [...], optional "use_cuda_graphs", optional
//                                      "in_spec" / "out_spec" (CallSpec), "engines": [{"node", "plan": entry,
//                                      "input_bindings": [...], "output_bindings": [...]}],
//                                      "constants": [{"graph": "" or segment node, "value", "entry", "dtype",
//                                      "sizes"}]}
//   kiln_module/graph.kir             the partitioned graph in IR text form (ir/text.h), engine segments with
//                                     their subgraphs, constants without values
//   kiln_module/engines/<node>.plan   one serialized engine::Plan per engine segment
//   kiln_module/data/weights/weight_N raw little-endian constant data (a storage shared by several constants is
//                                     stored once)
//
// Loading checks everything: the zip structure and CRCs, the format name and version, every JSON field's type,
// the graph text, that every constant gets data of exactly its size, every plan (its own checksum and fields) and
// that engines and bindings match the graph. A foreign, truncated or corrupted file is a kiln::Error naming the file
// and what is wrong.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime/compiled_module.h"

namespace kiln::runtime {

inline constexpr int kModuleFormatVersion = 1;

/// Writes `module` to `path` through a temporary file and a rename: a failed save leaves no file behind.
void save(const CompiledModule& module, const std::string& path);
/// The archive's bytes.
std::vector<uint8_t> save_to_bytes(const CompiledModule& module);

/// Loads a .kiln archive. Throws kiln::Error (naming the file) on anything malformed.
std::shared_ptr<CompiledModule> load(const std::string& path);
/// The same from bytes; `label` names them in errors.
std::shared_ptr<CompiledModule> load_from_bytes(std::vector<uint8_t> bytes, const std::string& label = "<memory>");

/// True when `path` names a .kiln archive (by its archive_format entry); false for anything else, .pt2 included.
bool is_module_archive(const std::string& path);

}  // namespace kiln::runtime
