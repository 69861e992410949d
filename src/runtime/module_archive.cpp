// The .kiln archive: saving and validated loading of compiled modules.

#include "kiln/runtime/module_archive.h"

#include <map>

#include <nlohmann/json.hpp>

#include "kiln/ir/text.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/zip.h"
#include "runtime/module_archive_read.h"

namespace kiln::runtime {
namespace {

using json = nlohmann::json;

// The archive entry of an engine segment's plan.
std::string plan_entry(const std::string& node) { return std::string(kModuleRoot) + "engines/" + node + ".plan"; }

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
  const std::string root = kModuleRoot;
  zip.add(root + "archive_format", std::string(kModuleFormatName));
  zip.add(root + "archive_version", std::to_string(kModuleFormatVersion));

  json meta;
  meta["format_version"] = kModuleFormatVersion;
  meta["kiln_version"] = "0.1.0";
  meta["backend"] = module.backend();
  meta["graph"] = root + "graph.kir";
  meta["output_kinds"] = module.output_kinds();
  meta["use_cuda_graphs"] = module.use_cuda_graphs();
  if (!module.call_spec().in_spec.empty()) meta["in_spec"] = module.call_spec().in_spec;
  if (!module.call_spec().out_spec.empty()) meta["out_spec"] = module.call_spec().out_spec;
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

std::shared_ptr<CompiledModule> load_zip(const ZipReader& zip, const std::string& label) {
  ModuleArchiveContents contents = read_module_archive(zip, label);
  std::shared_ptr<CompiledModule> module;
  try {
    module = std::make_shared<CompiledModule>(std::shared_ptr<const ir::Graph>(std::move(contents.graph)),
                                              std::move(contents.engines), contents.backend);
    module->set_output_kinds(std::move(contents.output_kinds));
    module->set_use_cuda_graphs(contents.use_cuda_graphs);
    module->set_call_spec(std::move(contents.call_spec));
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
      bad_archive(label, e.message());
    }
  }();
  return load_zip(zip, label);
}

std::shared_ptr<CompiledModule> load(const std::string& path) { return load_from_bytes(read_file_bytes(path), path); }

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
