// The INT8 calibration cache (calibration_cache.h).

#include "compiler/calibration_cache.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kiln/compiler/engine_cache.h"
#include "kiln/support/cache_dir.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/hash.h"
#include "kiln/support/logging.h"

namespace kiln::compiler::detail {
namespace {

namespace fs = std::filesystem;
constexpr const char* kFormat = "kiln calibration cache v1";

std::string entry_path(const std::string& dir, const std::string& key) {
  return (fs::path(dir) / (key + ".kcal")).string();
}

void hash_tensor(Sha256& sha, const HostTensor& t) {
  std::ostringstream head;
  head << dtype_name(t.dtype()) << "[";
  for (int64_t s : t.sizes()) head << s << ",";
  head << "]";
  sha.update(head.str());
  if (t.nbytes() > 0) sha.update(t.data(), t.nbytes());
}

}  // namespace

std::string calibration_key(const std::string& engine_hash, const ir::Graph& segment,
                            const std::vector<std::vector<HostTensor>>& batches) {
  Sha256 sha;
  sha.update(std::string(kFormat) + "\n" + engine_hash + "\n");
  for (const ir::Value* c : segment.constants()) {
    sha.update(c->name() + "\n");
    hash_tensor(sha, c->data());
  }
  for (const auto& batch : batches) {
    sha.update("batch\n");
    for (const HostTensor& t : batch) hash_tensor(sha, t);
  }
  return sha.hex_digest();
}

std::string calibration_cache_dir(const CompilationSettings& settings) {
  if (settings.engine_cache_dir.empty() && user_cache_dir().empty()) return "";
  const std::string engines =
      settings.engine_cache_dir.empty() ? default_engine_cache_dir() : settings.engine_cache_dir;
  return (fs::path(engines) / "calibration").string();
}

std::string ranges_text(const DynamicRanges& ranges) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, r] : ranges) j[name] = {r.min, r.max};
  return j.dump();
}

std::optional<DynamicRanges> load_calibration(const std::string& dir, const std::string& key) {
  if (dir.empty()) return std::nullopt;
  const std::string path = entry_path(dir, key);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  try {
    const std::string text = read_file_text(path);
    const size_t newline = text.find('\n');
    KILN_CHECK(newline != std::string::npos, InvalidInput, "no tag line");
    const std::string body = text.substr(0, newline);
    const std::string tag = text.substr(newline + 1);
    KILN_CHECK(tag == to_hex(hmac_sha256(user_cache_key(), body)) + "\n", InvalidInput,
               "authentication failed");
    const nlohmann::json j = nlohmann::json::parse(body);
    KILN_CHECK(j.is_object() && j.value("format", "") == kFormat && j.value("key", "") == key &&
                   j.contains("ranges") && j["ranges"].is_object(),
               InvalidInput, "not a calibration entry for this key");
    DynamicRanges ranges;
    for (const auto& [name, r] : j["ranges"].items()) {
      KILN_CHECK(r.is_array() && r.size() == 2 && r[0].is_number() && r[1].is_number(), InvalidInput,
                 "bad range of '", name, "'");
      const engine::DynamicRange range{r[0].get<float>(), r[1].get<float>()};
      KILN_CHECK(range.usable(), InvalidInput, "unusable range of '", name, "'");
      ranges.emplace(name, range);
    }
    return ranges;
  } catch (const std::exception& e) {
    KILN_WARN("calibration cache entry ", path, " not usable, calibrating again: ", e.what());
    return std::nullopt;
  }
}

void save_calibration(const std::string& dir, const std::string& key, const DynamicRanges& ranges) {
  if (dir.empty()) return;
  try {
    ensure_private_dir(dir);
    nlohmann::json j;
    j["format"] = kFormat;
    j["key"] = key;
    j["ranges"] = nlohmann::json::parse(ranges_text(ranges));
    const std::string body = j.dump();
    const std::string text = body + "\n" + to_hex(hmac_sha256(user_cache_key(), body)) + "\n";
    write_file_atomic(entry_path(dir, key), text.data(), text.size());
  } catch (const std::exception& e) {
    KILN_WARN("calibration cache: could not save the ranges in ", dir, ": ", e.what());
  }
}

}  // namespace kiln::compiler::detail
