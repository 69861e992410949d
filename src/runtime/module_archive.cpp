// The .kiln archive: saving and validated loading of compiled modules.

#include "kiln/runtime/module_archive.h"

#include <cstring>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "kiln/ir/text.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/json_limits.h"
#include "kiln/support/version.h"
#include "kiln/support/zip.h"
#include "runtime_core/module_archive_read.h"

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

// The name of the plan weight that holds exactly `constant`'s data (its state-dict name, else its value name: the
// names converters give weights), or "" when the plan holds it differently or not at all.
std::string same_weight_in_plan(const engine::Plan& plan, const ir::Value& constant) {
  const HostTensor& data = constant.data();
  for (const std::string& name : {constant.fqn(), constant.name()}) {
    if (name.empty()) continue;
    const HostTensor weight = plan.weight(name);
    if (weight.defined() && weight.dtype() == data.dtype() && weight.sizes() == data.sizes() &&
        (data.nbytes() == 0 || std::memcmp(weight.data(), data.data(), data.nbytes()) == 0)) {
      return name;
    }
  }
  return "";
}

}  // namespace

std::vector<uint8_t> save_to_bytes(const CompiledModule& module) {
  ZipWriter zip;
  const std::string root = kModuleRoot;
  zip.add(root + "archive_format", std::string(kModuleFormatName));
  zip.add(root + "archive_version", std::to_string(kModuleFormatVersion));

  json meta;
  meta["format_version"] = kModuleFormatVersion;
  meta["kiln_version"] = kiln_version();
  if (!module.compile_settings().empty()) meta["settings"] = json::parse(module.compile_settings());
  meta["backend"] = module.backend();
  meta["graph"] = root + "graph.kir";
  meta["output_kinds"] = module.output_kinds();
  meta["use_cuda_graphs"] = module.use_cuda_graphs();
  meta["static_shape_cuda_graphs"] = module.static_shape_cuda_graphs();
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
  std::map<std::string, const engine::Plan*> plans;
  for (const EngineSegment& e : module.engines()) plans[e.node] = e.plan.get();
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
    // A segment's constant that its plan holds as it is (same dtype, sizes and bytes) is stored once, in the plan.
    auto plan = plans.find(owner);
    if (plan != plans.end()) {
      const std::string weight = same_weight_in_plan(*plan->second, *c);
      if (!weight.empty()) {
        entry["plan_weight"] = weight;
        list.push_back(entry);
        continue;
      }
    }
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
    module->set_static_shape_cuda_graphs(contents.static_shape_cuda_graphs);
    module->set_call_spec(std::move(contents.call_spec));
    module->set_compile_settings(std::move(contents.compile_settings));
  } catch (const Error& e) {
    throw e.with_context(ErrorContext{label, "", "", ""});
  }
  return module;
}

}  // namespace

std::shared_ptr<CompiledModule> load_from_bytes(std::vector<uint8_t> bytes, const std::string& label) {
  return load_zip(open_module_zip(std::move(bytes), label), label);
}

std::shared_ptr<CompiledModule> load(const std::string& path) { return load_from_bytes(read_file_bytes(path), path); }

}  // namespace kiln::runtime
