// The .kiln archive's validated reading: everything load() checks that needs no libtorch (fuzz/kiln_archive
// runs it under libFuzzer).

#include "runtime_core/module_archive_read.h"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "kiln/engine/thread_pool.h"
#include "kiln/ir/segment.h"
#include "kiln/ir/text.h"
#include "kiln/runtime/module_archive_format.h"
#include "kiln/support/error.h"
#include "kiln/support/json_limits.h"
#include "kiln/support/printable.h"

namespace kiln::runtime {

[[noreturn]] void bad_archive(const std::string& label, const std::string& what) {
  throw Error(ErrorKind::InvalidInput, "not a valid .kiln archive: " + what, ErrorContext{label, "", "", ""});
}

ZipReader open_module_zip(std::vector<uint8_t> bytes, const std::string& label) {
  try {
    return ZipReader::from_bytes(std::move(bytes), label);
  } catch (const Error& e) {
    bad_archive(label, e.message());
  }
}

namespace {

using json = nlohmann::json;

const json& field(const json& object, const char* key, const std::string& where, const std::string& label) {
  if (!object.is_object() || !object.contains(key)) bad_archive(label, where + " lacks \"" + key + "\"");
  return object.at(key);
}

std::string string_field(const json& object, const char* key, const std::string& where,
                         const std::string& label) {
  const json& v = field(object, key, where, label);
  if (!v.is_string()) bad_archive(label, where + " \"" + key + "\" must be a string");
  return v.get<std::string>();
}

std::vector<std::string> strings_field(const json& object, const char* key, const std::string& where,
                                       const std::string& label) {
  const json& v = field(object, key, where, label);
  if (!v.is_array()) bad_archive(label, where + " \"" + key + "\" must be a list of strings");
  std::vector<std::string> out;
  for (const json& s : v) {
    if (!s.is_string()) bad_archive(label, where + " \"" + key + "\" must be a list of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

// The data of a constant stored once, as the plan weight `weight` of engine segment `owner` (format 2 on).
HostTensor data_from_plan(const ModuleArchiveContents& contents, const std::string& owner, const std::string& weight,
                          const std::string& value, const std::string& label) {
  if (contents.format_version < 2) bad_archive(label, "constant '" + value + "': \"plan_weight\" needs format 2");
  for (const EngineSegment& e : contents.engines) {
    if (e.node != owner) continue;
    HostTensor data = e.plan->weight(weight);
    if (!data.defined()) {
      bad_archive(label, "constant '" + value + "' names weight '" + weight + "', which engine '" + owner +
                             "' does not hold");
    }
    return data;
  }
  bad_archive(label, "constant '" + value + "' names a plan weight of '" + owner + "', which has no engine");
}

// Sets the data of every constant listed in the metadata; every constant of the graph must get data.
void attach_constants(ModuleArchiveContents& contents, const json& list, const ZipReader& zip,
                      const std::string& label) {
  ir::Graph& graph = *contents.graph;
  if (!list.is_array()) bad_archive(label, "\"constants\" must be a list");
  std::map<std::string, ir::Graph*> owners = {{"", &graph}};
  for (const ir::Node* node : graph.nodes()) {
    if (node->subgraph() != nullptr) owners[node->name()] = node->subgraph().get();
  }
  std::map<std::string, std::shared_ptr<const std::vector<uint8_t>>> entries;
  std::set<std::pair<std::string, std::string>> seen;
  for (const json& c : list) {
    const std::string where = "constant entry";
    std::string owner = string_field(c, "graph", where, label);
    std::string value = string_field(c, "value", where, label);
    std::string dtype_text = string_field(c, "dtype", where, label);
    const json& sizes_json = field(c, "sizes", where, label);
    auto g = owners.find(owner);
    if (g == owners.end())
      bad_archive(label, "constant '" + value + "' belongs to unknown graph '" + owner + "'");
    ir::Value* v = g->second->find_value(value);
    if (v == nullptr || v->role() != ir::ValueRole::Constant) {
      bad_archive(label, "'" + value + "' is not a constant of " +
                             (owner.empty() ? std::string("the graph") : owner));
    }
    if (!seen.emplace(owner, value).second) bad_archive(label, "constant '" + value + "' is listed twice");
    auto dtype = dtype_from_name(dtype_text);
    if (!dtype) bad_archive(label, "constant '" + value + "' has unknown dtype '" + dtype_text + "'");
    if (!sizes_json.is_array())
      bad_archive(label, "constant '" + value + "' sizes must be a list of integers");
    std::vector<int64_t> sizes;
    for (const json& d : sizes_json) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        bad_archive(label, "constant '" + value + "' has a bad size");
      sizes.push_back(d.get<int64_t>());
    }
    if (*dtype != v->meta().dtype)
      bad_archive(label, "constant '" + value + "' dtype differs from the graph's");
    auto fixed = v->meta().static_sizes();
    if (!fixed || *fixed != sizes)
      bad_archive(label, "constant '" + value + "' sizes differ from the graph's");
    if (c.contains("plan_weight")) {
      HostTensor data =
          data_from_plan(contents, owner, string_field(c, "plan_weight", where, label), value, label);
      if (data.dtype() != *dtype || data.sizes() != sizes)
        bad_archive(label, "constant '" + value + "' differs in dtype or sizes from its plan weight");
      v->set_data(std::move(data));
      continue;
    }
    std::string entry = string_field(c, "entry", where, label);
    auto stored = entries.find(entry);
    if (stored == entries.end()) {
      if (!zip.contains(entry))
        bad_archive(label, "constant '" + value + "' names missing entry '" + entry + "'");
      stored = entries.emplace(entry, std::make_shared<const std::vector<uint8_t>>(zip.read(entry))).first;
    }
    int64_t numel = checked_numel(sizes);
    if (stored->second->size() != static_cast<size_t>(numel) * dtype_size(*dtype)) {
      bad_archive(label, "constant '" + value + "' needs " + std::to_string(numel * dtype_size(*dtype)) +
                             " bytes, entry '" + entry + "' has " + std::to_string(stored->second->size()));
    }
    v->set_data(HostTensor(*dtype, sizes, stored->second));
  }
  for (const auto& [owner, g] : owners) {
    for (const ir::Value* c : g->constants()) {
      if (!c->data().defined()) bad_archive(label, "constant '" + c->name() + "' has no data in the archive");
    }
  }
}

}  // namespace

int read_format_version(const ZipReader& zip, const std::string& label) {
  const std::string root = kModuleRoot;
  if (!zip.contains(root + "archive_format"))
    bad_archive(label, "no " + root + "archive_format entry (not a .kiln file)");
  if (zip.read_text(root + "archive_format") != kModuleFormatName) {
    bad_archive(label, "archive_format is not \"kiln\"");
  }
  if (!zip.contains(root + "archive_version")) bad_archive(label, "no " + root + "archive_version entry");
  const std::string text = zip.read_text(root + "archive_version");
  int version = 0;
  const bool digits = !text.empty() && text.size() <= 6 && text.find_first_not_of("0123456789") == std::string::npos;
  if (digits) version = std::stoi(text);
  if (!digits || version < 1) bad_archive(label, "archive_version '" + printable(text) + "' is not a format version");
  if (version > kModuleFormatVersion) {
    throw Error(ErrorKind::Unsupported,
                ".kiln format version " + std::to_string(version) + " was written by a newer Kiln (this Kiln reads " +
                    "versions " + std::to_string(kMinModuleFormatVersion) + " to " +
                    std::to_string(kModuleFormatVersion) + "): upgrade Kiln, or compile the model with this one",
                ErrorContext{label, "", "", ""});
  }
  if (version < kMinModuleFormatVersion) {
    throw Error(ErrorKind::Unsupported,
                ".kiln format version " + std::to_string(version) + " is no longer read (this Kiln reads versions " +
                    std::to_string(kMinModuleFormatVersion) + " to " + std::to_string(kModuleFormatVersion) +
                    "): compile the model again",
                ErrorContext{label, "", "", ""});
  }
  return version;
}

ModuleArchiveContents read_module_archive(const ZipReader& zip, const std::string& label) {
  ModuleArchiveContents contents;
  const std::string root = kModuleRoot;
  contents.format_version = read_format_version(zip, label);
  if (!zip.contains(root + "module.json")) bad_archive(label, "no module.json");
  json meta;
  try {
    const std::string text = zip.read_text(root + "module.json");
    if (json_nesting_depth(text) > kMaxJsonDepth) {
      bad_archive(label, "module.json nests arrays/objects deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    meta = json::parse(text);
  } catch (const json::exception& e) {
    bad_archive(label, std::string("module.json is not JSON: ") + e.what());
  }
  const json& fv = field(meta, "format_version", "module.json", label);
  if (!fv.is_number_integer() || fv.get<int64_t>() != contents.format_version) {
    bad_archive(label, "module.json format_version differs from archive_version");
  }
  contents.backend = string_field(meta, "backend", "module.json", label);
  std::string graph_entry = string_field(meta, "graph", "module.json", label);
  if (!zip.contains(graph_entry)) bad_archive(label, "graph entry '" + graph_entry + "' is missing");
  try {
    contents.graph = ir::parse_graph(zip.read_text(graph_entry));
  } catch (const Error& e) {
    bad_archive(label, "the graph does not parse: " + e.message());
  }

  // The compile settings' threads (optional: archives without settings or without the key run on all cores).
  engine::BackendOptions engine_options;
  if (meta.contains("settings") && meta.at("settings").is_object() && meta.at("settings").contains("threads")) {
    const json& threads = meta.at("settings").at("threads");
    if (!threads.is_number_integer() || threads.get<int64_t>() < 0 || threads.get<int64_t>() > engine::kMaxThreads) {
      bad_archive(label, "module.json settings \"threads\" must be an integer in [0, " +
                             std::to_string(engine::kMaxThreads) + "]");
    }
    engine_options.threads = static_cast<int>(threads.get<int64_t>());
  }
  const json& engines_json = field(meta, "engines", "module.json", label);
  if (!engines_json.is_array()) bad_archive(label, "\"engines\" must be a list");
  for (const json& e : engines_json) {
    EngineSegment segment;
    segment.node = string_field(e, "node", "engine entry", label);
    std::string plan = string_field(e, "plan", "engine entry", label);
    segment.input_bindings = strings_field(e, "input_bindings", "engine entry", label);
    segment.output_bindings = strings_field(e, "output_bindings", "engine entry", label);
    const ir::Node* node = contents.graph->find_node(segment.node);
    if (node == nullptr || !ir::is_engine_segment(*node)) {
      bad_archive(label, "engine '" + segment.node + "' is not an engine segment of the graph");
    }
    if (!zip.contains(plan)) bad_archive(label, "plan entry '" + plan + "' is missing");
    try {
      segment.plan = engine::Plan::deserialize(zip.read(plan), engine_options);
    } catch (const Error& err) {
      throw err.with_context(ErrorContext{label, segment.node, "", ""});
    }
    contents.engines.push_back(std::move(segment));
  }
  // After the engines: a constant may be stored once, as a weight of its segment's plan.
  attach_constants(contents, field(meta, "constants", "module.json", label), zip, label);
  contents.output_kinds = strings_field(meta, "output_kinds", "module.json", label);
  if (meta.contains("kiln_version") && meta.at("kiln_version").is_string()) {
    contents.kiln_version = meta.at("kiln_version").get<std::string>();
  }
  // Optional (written since the settings were saved): the compiler's settings object, kept as text.
  if (meta.contains("settings")) {
    if (!meta.at("settings").is_object()) bad_archive(label, "module.json \"settings\" must be an object");
    contents.compile_settings = meta.at("settings").dump();
  }
  // Optional (archives written before a setting have none: its default).
  for (auto [key, field] : {std::pair{"use_cuda_graphs", &contents.use_cuda_graphs},
                             std::pair{"static_shape_cuda_graphs", &contents.static_shape_cuda_graphs}}) {
    if (!meta.contains(key)) continue;
    if (!meta.at(key).is_boolean()) bad_archive(label, std::string("module.json \"") + key + "\" must be true or false");
    *field = meta.at(key).get<bool>();
  }
  // Optional too (modules compiled from programs without a call spec, or before Kiln kept it: none).
  if (meta.contains("in_spec"))
    contents.call_spec.in_spec = string_field(meta, "in_spec", "module.json", label);
  if (meta.contains("out_spec"))
    contents.call_spec.out_spec = string_field(meta, "out_spec", "module.json", label);
  return contents;
}

}  // namespace kiln::runtime
