#include "compiler/engine_cache_entry.h"

#include <nlohmann/json.hpp>

#include "compiler/plan_refit.h"
#include "kiln/support/error.h"

namespace kiln::compiler::detail {
namespace {

nlohmann::json precision_notes_json(const std::vector<engine::PrecisionNote>& notes) {
  nlohmann::json out = nlohmann::json::array();
  for (const engine::PrecisionNote& n : notes) out.push_back({{"layer", n.layer}, {"reason", n.reason}});
  return out;
}

std::vector<engine::PrecisionNote> precision_notes_from(const nlohmann::json& header) {
  std::vector<engine::PrecisionNote> out;
  if (!header.contains("precision_notes")) return out;
  for (const nlohmann::json& n : header.at("precision_notes"))
    out.push_back({n.at("layer").get<std::string>(), n.at("reason").get<std::string>()});
  return out;
}

}  // namespace

std::vector<uint8_t> make_cache_entry(const CachedEngine& engine, const ir::Graph& segment) {
  nlohmann::json header;
  header["input_bindings"] = engine.input_bindings;
  header["output_bindings"] = engine.output_bindings;
  header["baked_constants"] = baked_constant_digests(*engine.plan, segment);
  if (engine.program_ranges) header["program_ranges"] = true;
  if (!engine.quantization_notes.empty()) header["quantization_notes"] = engine.quantization_notes;
  if (!engine.precision_notes.empty())
    header["precision_notes"] = precision_notes_json(engine.precision_notes);
  const std::string text = header.dump();
  std::vector<uint8_t> blob(8);
  for (int i = 0; i < 8; ++i) blob[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
  blob.insert(blob.end(), text.begin(), text.end());
  const std::vector<uint8_t> plan = engine.plan->serialize(/*strip_weights=*/true);
  blob.insert(blob.end(), plan.begin(), plan.end());
  return blob;
}

CachedEngine load_cache_entry(const std::vector<uint8_t>& blob, const ir::Graph& segment, bool strip_weights,
                              const engine::BackendOptions& options) {
  KILN_CHECK(blob.size() >= 8, InvalidInput, "cache entry too short");
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= static_cast<uint64_t>(blob[i]) << (8 * i);
  KILN_CHECK(header_size <= blob.size() - 8, InvalidInput, "cache entry header runs past its end");
  nlohmann::json header = nlohmann::json::parse(blob.begin() + 8, blob.begin() + 8 + static_cast<int64_t>(header_size),
                                                nullptr, /*allow_exceptions=*/false);
  KILN_CHECK(header.is_object() && header.contains("input_bindings") && header["input_bindings"].is_array() &&
                 header.contains("output_bindings") && header["output_bindings"].is_array() &&
                 header.contains("baked_constants") && header["baked_constants"].is_object(),
             InvalidInput, "cache entry header is malformed");
  CachedEngine out;
  try {
    out.input_bindings = header["input_bindings"].get<std::vector<std::string>>();
    out.output_bindings = header["output_bindings"].get<std::vector<std::string>>();
    out.program_ranges = header.value("program_ranges", false);
    out.quantization_notes = header.value("quantization_notes", std::vector<std::string>{});
    out.precision_notes = precision_notes_from(header);
  } catch (const nlohmann::json::exception& e) {
    KILN_FAIL(InvalidInput, "cache entry bindings are malformed: ", e.what());
  }
  KILN_CHECK(out.input_bindings.size() == segment.inputs().size() &&
                 out.output_bindings.size() == segment.outputs().size(),
             InvalidInput, "cache entry bindings do not fit the segment");
  const auto constants = constants_by_refit_name(segment);
  for (const auto& [name, digest] : header["baked_constants"].items()) {
    auto it = constants.find(name);
    KILN_CHECK(it != constants.end() && digest.is_string() &&
                   tensor_digest(it->second->data()) == digest.get<std::string>(),
               InvalidInput, "constant '", name, "' is compiled into the cached engine and differs in this program");
  }
  std::vector<uint8_t> plan_bytes(blob.begin() + 8 + static_cast<int64_t>(header_size), blob.end());
  out.plan = engine::Plan::deserialize(plan_bytes, options);
  KILN_CHECK(out.plan->refittable(), InvalidInput, "cached engine is not refittable");
  refit_from_graph(out.plan, segment);
  out.plan->set_strip_weights(strip_weights);
  return out;
}

}  // namespace kiln::compiler::detail
