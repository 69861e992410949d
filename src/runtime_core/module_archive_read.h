#pragma once
// Reading a .kiln archive (module_archive.h describes the layout) into its parts, every field validated,
// without libtorch: load() builds the CompiledModule, HostModule::load the HostModule, from these parts; the fuzz target fuzz/kiln_archive runs
// this alone.

#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/runtime/module_parts.h"
#include "kiln/support/zip.h"

namespace kiln::runtime {

inline constexpr const char* kModuleRoot = "kiln_module/";
inline constexpr const char* kModuleFormatName = "kiln";

/// What a .kiln archive holds: the partitioned graph with every constant's data attached, one engine per
/// segment (plan deserialized, bindings named), the backend and the output kinds.
struct ModuleArchiveContents {
  std::unique_ptr<ir::Graph> graph;
  std::vector<EngineSegment> engines;
  std::string backend;
  std::vector<std::string> output_kinds;
  CallSpec call_spec;
  bool use_cuda_graphs = false;
  bool static_shape_cuda_graphs = true;  // absent in archives written before the setting: its default
  int format_version = 0;            // the archive's (kMinModuleFormatVersion..kModuleFormatVersion)
  std::string kiln_version;          // the Kiln that wrote it ("" when not recorded)
  std::string compile_settings;      // JSON object text ("" when not recorded)
};

/// The archive's format version after checking archive_format: Unsupported, saying what to do, for a version
/// this Kiln does not read (newer than kModuleFormatVersion or older than kMinModuleFormatVersion).
int read_format_version(const ZipReader& zip, const std::string& label);

/// Reads and checks everything but what the CompiledModule constructor checks (bindings against the graph).
/// Throws kiln::Error(InvalidInput) "not a valid .kiln archive: ..." naming `label`, Unsupported for another
/// format version.
ModuleArchiveContents read_module_archive(const ZipReader& zip, const std::string& label);

/// The archive in `bytes` as a zip; a malformed zip is "not a valid .kiln archive: ..." naming `label`.
ZipReader open_module_zip(std::vector<uint8_t> bytes, const std::string& label);

/// Throws kiln::Error(InvalidInput) "not a valid .kiln archive: WHAT" naming `label`.
[[noreturn]] void bad_archive(const std::string& label, const std::string& what);

}  // namespace kiln::runtime
