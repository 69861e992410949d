#pragma once
// The .kiln archive: a compiled module on disk (read without libtorch by HostModule, host_module.h), laid out in the .pt2 style (a zip whose entries sit under one
// top-level folder, stored uncompressed and 64-byte aligned):
//
//   kiln_module/archive_format        "kiln"
//   kiln_module/archive_version       kModuleFormatVersion as text
//   kiln_module/module.json           {"format_version", "kiln_version", "backend", "graph": entry,
//                                      "output_kinds": [...], optional "use_cuda_graphs", optional
//                                      "in_spec" / "out_spec" (CallSpec), optional "settings" (the compile
//                                      settings), "engines": [{"node", "plan": entry,
//                                      "input_bindings": [...], "output_bindings": [...]}],
//                                      "constants": [{"graph": "" or segment node, "value", "dtype", "sizes",
//                                      "entry" or (format 2) "plan_weight"}]}: a segment's constant that its
//                                      plan holds byte for byte names that plan weight instead of an entry, so
//                                      the archive stores the bytes once
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
//
// Compatibility (docs/formats.md): this Kiln reads every format version from kMinModuleFormatVersion to
// kModuleFormatVersion and writes kModuleFormatVersion. A change that an older reader would misread or reject
// bumps the version; optional keys that older readers ignore (such as "settings") do not. A newer or retired
// version is refused with an Unsupported error that says what to do. The plans inside follow the plan format's
// own rule (engine/plan.h).

#include <cstdint>
#include <string>

namespace kiln::runtime {

inline constexpr int kModuleFormatVersion = 2;
/// The oldest format version this Kiln still reads.
inline constexpr int kMinModuleFormatVersion = 1;

/// What an archive says about itself, for `kiln inspect`.
struct ModuleArchiveInfo {
  int format_version = 0;
  std::string kiln_version;  // the Kiln that wrote it ("" when not recorded)
  uint64_t file_bytes = 0;
  uint64_t plan_bytes = 0;      // all engines/*.plan entries
  uint64_t constant_bytes = 0;  // all data/ entries (constants of the graph and of the engine segments)
};
/// Reads the format version, writer and entry sizes of the archive at `path` (after the format checks load()
/// starts with; the rest is load()'s business).
ModuleArchiveInfo describe_module_archive(const std::string& path);

/// True when `path` names a .kiln archive (by its archive_format entry); false for anything else, .pt2 included.
bool is_module_archive(const std::string& path);

}  // namespace kiln::runtime
