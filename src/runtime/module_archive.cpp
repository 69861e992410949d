// The .kiln archive: saving and validated loading of compiled modules.

#include "kiln/runtime/module_archive.h"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "kiln/ir/text.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/zip.h"

namespace kiln::runtime {
namespace {

constexpr const char* kRoot = "kiln_module/";
constexpr const char* kFormatName = "kiln";
constexpr const char* kSegmentOp = "kiln.engine_segment.default";

using json = nlohmann::json;

// Fails with the archive's label in the message.
[[noreturn]] void bad(const std::string& label, const std::string& what) {
  throw Error(ErrorKind::InvalidInput, "not a valid .kiln archive: " + what, ErrorContext{label, "", "", ""});
}

const json& field(const json& object, const char* key, const std::string& where, const std::string& label) {
  if (!object.is_object() || !object.contains(key)) bad(label, where + " lacks \"" + key + "\"");
  return object.at(key);
}

std::string string_field(const json& object, const char* key, const std::string& where, const std::string& label) {
  const json& v = field(object, key, where, label);
  if (!v.is_string()) bad(label, where + " \"" + key + "\" must be a string");
  return v.get<std::string>();
}

std::vector<std::string> strings_field(const json& object, const char* key, const std::string& where,
                                       const std::string& label) {
  const json& v = field(object, key, where, label);
  if (!v.is_array()) bad(label, where + " \"" + key + "\" must be a list of strings");
  std::vector<std::string> out;
  for (const json& s : v) {
    if (!s.is_string()) bad(label, where + " \"" + key + "\" must be a list of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

std::string plan_entry(const std::string& node) { return std::string(kRoot) + "engines/" + node + ".plan"; }

// Every constant of the graph and of its engine segments' subgraphs, keyed by (segment node or "", value).
void collect_constants(const ir::Graph& graph, const std::string& owner,
                       std::vector<std::pair<std::string, const ir::Value*>>& out) {
  for (const ir::Value* c : graph.constants()) out.emplace_back(owner, c);
  if (!owner.empty()) return;
  for (const ir::Node* node : graph.nodes()) {
    if (node->subgraph() != nullptr) collect_constants(*node->subgraph(), node->name(), out);
  }
}

}  // namespace

std::vector<uint8_t> save_to_bytes(const CompiledModule& module) {
  ZipWriter zip;
  const std::string root = kRoot;
  zip.add(root + "archive_format", std::string(kFormatName));
  zip.add(root + "archive_version", std::to_string(kModuleFormatVersion));

  json meta;
  meta["format_version"] = kModuleFormatVersion;
  meta["kiln_version"] = "0.1.0";
  meta["backend"] = module.backend();
  meta["graph"] = root + "graph.kir";
  meta["output_kinds"] = module.output_kinds();
  meta["use_cuda_graphs"] = module.use_cuda_graphs();
  zip.add(root + "graph.kir", ir::print_graph(module.graph()));

  json engines = json::array();
  for (const EngineSegment& e : module.engines()) {
    KILN_CHECK(e.node.find('/') == std::string::npos, InvalidInput, "engine segment name '", e.node,
               "' cannot name an archive entry");
    json entry;
    entry["node"] = e.node;
    entry["plan"] = plan_entry(e.node);
    entry["input_bindings"] = e.input_bindings;
    entry["output_bindings"] = e.output_bindings;
    engines.push_back(entry);
    zip.add(plan_entry(e.node), e.plan->serialize());
  }
  meta["engines"] = engines;

  std::vector<std::pair<std::string, const ir::Value*>> constants;
  collect_constants(module.graph(), "", constants);
  std::map<const uint8_t*, std::string> stored;  // storage already written -> its entry
  json list = json::array();
  for (const auto& [owner, c] : constants) {
    const HostTensor& data = c->data();
    KILN_CHECK(data.defined(), InvalidInput, "constant '", c->name(), "' has no data to save");
    json entry;
    entry["graph"] = owner;
    entry["value"] = c->name();
    entry["dtype"] = dtype_name(data.dtype());
    entry["sizes"] = data.sizes();
    auto it = stored.find(data.data());
    if (it == stored.end()) {
      std::string name = root + "data/weights/weight_" + std::to_string(stored.size());
      zip.add(name, std::vector<uint8_t>(data.data(), data.data() + data.nbytes()));
      it = stored.emplace(data.data(), name).first;
    }
    entry["entry"] = it->second;
    list.push_back(entry);
  }
  meta["constants"] = list;
  zip.add(root + "module.json", meta.dump(1));
  return zip.finish();
}

void save(const CompiledModule& module, const std::string& path) {
  std::vector<uint8_t> bytes = save_to_bytes(module);
  write_file_atomic(path, bytes);
}

namespace {

// Sets the data of every constant listed in the metadata; every constant of the graph must get data.
void attach_constants(ir::Graph& graph, const json& list, const ZipReader& zip, const std::string& label) {
  if (!list.is_array()) bad(label, "\"constants\" must be a list");
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
    std::string entry = string_field(c, "entry", where, label);
    std::string dtype_text = string_field(c, "dtype", where, label);
    const json& sizes_json = field(c, "sizes", where, label);
    auto g = owners.find(owner);
    if (g == owners.end()) bad(label, "constant '" + value + "' belongs to unknown graph '" + owner + "'");
    ir::Value* v = g->second->find_value(value);
    if (v == nullptr || v->role() != ir::ValueRole::Constant) {
      bad(label, "'" + value + "' is not a constant of " + (owner.empty() ? std::string("the graph") : owner));
    }
    if (!seen.emplace(owner, value).second) bad(label, "constant '" + value + "' is listed twice");
    auto dtype = dtype_from_name(dtype_text);
    if (!dtype) bad(label, "constant '" + value + "' has unknown dtype '" + dtype_text + "'");
    if (!sizes_json.is_array()) bad(label, "constant '" + value + "' sizes must be a list of integers");
    std::vector<int64_t> sizes;
    for (const json& d : sizes_json) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) bad(label, "constant '" + value + "' has a bad size");
      sizes.push_back(d.get<int64_t>());
    }
    if (*dtype != v->meta().dtype) bad(label, "constant '" + value + "' dtype differs from the graph's");
    auto fixed = v->meta().static_sizes();
    if (!fixed || *fixed != sizes) bad(label, "constant '" + value + "' sizes differ from the graph's");
    auto stored = entries.find(entry);
    if (stored == entries.end()) {
      if (!zip.contains(entry)) bad(label, "constant '" + value + "' names missing entry '" + entry + "'");
      stored = entries.emplace(entry, std::make_shared<const std::vector<uint8_t>>(zip.read(entry))).first;
    }
    int64_t numel = checked_numel(sizes);
    if (stored->second->size() != static_cast<size_t>(numel) * dtype_size(*dtype)) {
      bad(label, "constant '" + value + "' needs " + std::to_string(numel * dtype_size(*dtype)) + " bytes, entry '" +
                     entry + "' has " + std::to_string(stored->second->size()));
    }
    v->set_data(HostTensor(*dtype, sizes, stored->second));
  }
  for (const auto& [owner, g] : owners) {
    for (const ir::Value* c : g->constants()) {
      if (!c->data().defined()) bad(label, "constant '" + c->name() + "' has no data in the archive");
    }
  }
}

std::shared_ptr<CompiledModule> load_zip(const ZipReader& zip, const std::string& label) {
  const std::string root = kRoot;
  if (!zip.contains(root + "archive_format")) bad(label, "no " + root + "archive_format entry (not a .kiln file)");
  if (zip.read_text(root + "archive_format") != kFormatName) {
    bad(label, "archive_format is not \"kiln\"");
  }
  std::string version = zip.contains(root + "archive_version") ? zip.read_text(root + "archive_version") : "";
  if (version != std::to_string(kModuleFormatVersion)) {
    throw Error(ErrorKind::Unsupported,
                "unsupported .kiln format version '" + version + "' (this Kiln reads version " +
                    std::to_string(kModuleFormatVersion) + ")",
                ErrorContext{label, "", "", ""});
  }
  if (!zip.contains(root + "module.json")) bad(label, "no module.json");
  json meta;
  try {
    meta = json::parse(zip.read_text(root + "module.json"));
  } catch (const json::exception& e) {
    bad(label, std::string("module.json is not JSON: ") + e.what());
  }
  const json& fv = field(meta, "format_version", "module.json", label);
  if (!fv.is_number_integer() || fv.get<int64_t>() != kModuleFormatVersion) {
    bad(label, "module.json format_version differs from archive_version");
  }
  std::string backend = string_field(meta, "backend", "module.json", label);
  std::string graph_entry = string_field(meta, "graph", "module.json", label);
  if (!zip.contains(graph_entry)) bad(label, "graph entry '" + graph_entry + "' is missing");
  std::unique_ptr<ir::Graph> graph;
  try {
    graph = ir::parse_graph(zip.read_text(graph_entry));
  } catch (const Error& e) {
    bad(label, "the graph does not parse: " + e.message());
  }
  attach_constants(*graph, field(meta, "constants", "module.json", label), zip, label);

  const json& engines_json = field(meta, "engines", "module.json", label);
  if (!engines_json.is_array()) bad(label, "\"engines\" must be a list");
  std::vector<EngineSegment> engines;
  for (const json& e : engines_json) {
    EngineSegment segment;
    segment.node = string_field(e, "node", "engine entry", label);
    std::string plan = string_field(e, "plan", "engine entry", label);
    segment.input_bindings = strings_field(e, "input_bindings", "engine entry", label);
    segment.output_bindings = strings_field(e, "output_bindings", "engine entry", label);
    const ir::Node* node = graph->find_node(segment.node);
    if (node == nullptr || node->target().to_string() != kSegmentOp) {
      bad(label, "engine '" + segment.node + "' is not an engine segment of the graph");
    }
    if (!zip.contains(plan)) bad(label, "plan entry '" + plan + "' is missing");
    try {
      segment.plan = engine::Plan::deserialize(zip.read(plan));
    } catch (const Error& err) {
      throw err.with_context(ErrorContext{label, segment.node, "", ""});
    }
    engines.push_back(std::move(segment));
  }
  std::vector<std::string> kinds = strings_field(meta, "output_kinds", "module.json", label);
  // Optional (archives written before the setting have none: off).
  bool use_cuda_graphs = false;
  if (meta.contains("use_cuda_graphs")) {
    if (!meta.at("use_cuda_graphs").is_boolean())
      bad(label, "module.json \"use_cuda_graphs\" must be true or false");
    use_cuda_graphs = meta.at("use_cuda_graphs").get<bool>();
  }
  std::shared_ptr<CompiledModule> module;
  try {
    module = std::make_shared<CompiledModule>(std::shared_ptr<const ir::Graph>(std::move(graph)), std::move(engines),
                                              backend);
    module->set_output_kinds(std::move(kinds));
    module->set_use_cuda_graphs(use_cuda_graphs);
  } catch (const Error& e) {
    throw e.with_context(ErrorContext{label, "", "", ""});
  }
  return module;
}

}  // namespace

std::shared_ptr<CompiledModule> load_from_bytes(std::vector<uint8_t> bytes, const std::string& label) {
  ZipReader zip = [&]() {
    try {
      return ZipReader::from_bytes(std::move(bytes), label);
    } catch (const Error& e) {
      bad(label, e.message());
    }
  }();
  return load_zip(zip, label);
}

std::shared_ptr<CompiledModule> load(const std::string& path) { return load_from_bytes(read_file_bytes(path), path); }

bool is_module_archive(const std::string& path) {
  try {
    ZipReader zip = ZipReader::open(path);
    const std::string entry = std::string(kRoot) + "archive_format";
    return zip.contains(entry) && zip.read_text(entry) == kFormatName;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace kiln::runtime
