// What a .kiln archive says about itself (describe_module_archive, is_module_archive): its format entries and
// sizes, read without libtorch.

#include <filesystem>

#include <nlohmann/json.hpp>

#include "kiln/runtime/module_archive_format.h"
#include "kiln/support/error.h"
#include "kiln/support/json_limits.h"
#include "kiln/support/zip.h"
#include "runtime_core/module_archive_read.h"

namespace kiln::runtime {

using json = nlohmann::json;

ModuleArchiveInfo describe_module_archive(const std::string& path) {
  ZipReader zip = ZipReader::open(path);
  ModuleArchiveInfo info;
  info.format_version = read_format_version(zip, path);
  const std::string meta_entry = std::string(kModuleRoot) + "module.json";
  if (zip.contains(meta_entry)) {
    const std::string text = zip.read_text(meta_entry);
    if (json_nesting_depth(text) <= kMaxJsonDepth) {
      json meta = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (meta.is_object() && meta.contains("kiln_version") && meta["kiln_version"].is_string())
        info.kiln_version = meta["kiln_version"].get<std::string>();
    }
  }
  info.file_bytes = std::filesystem::file_size(path);
  const std::string engines = std::string(kModuleRoot) + "engines/", data = std::string(kModuleRoot) + "data/";
  for (const ZipEntry& e : zip.entries()) {
    if (e.name.rfind(engines, 0) == 0) info.plan_bytes += e.uncompressed_size;
    if (e.name.rfind(data, 0) == 0) info.constant_bytes += e.uncompressed_size;
  }
  return info;
}

bool is_module_archive(const std::string& path) {
  try {
    ZipReader zip = ZipReader::open(path);
    const std::string entry = std::string(kModuleRoot) + "archive_format";
    return zip.contains(entry) && zip.read_text(entry) == kModuleFormatName;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace kiln::runtime
