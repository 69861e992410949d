#include "module_inspect.h"

#include "kiln/runtime/module_archive.h"
#include "program_info.h"

namespace kiln::cli {
namespace {

using json = nlohmann::json;

json dims_json(const engine::Dims& dims) { return json(std::vector<int64_t>(dims.begin(), dims.end())); }

json layer_json(const engine::PlanLayerInfo& layer) {
  json precision = json::array(), in_formats = json::array(), out_formats = json::array();
  for (DType d : layer.output_dtypes) precision.push_back(dtype_name(d));
  for (engine::TensorFormat f : layer.input_formats) in_formats.push_back(engine::tensor_format_name(f));
  for (engine::TensorFormat f : layer.output_formats) out_formats.push_back(engine::tensor_format_name(f));
  return {{"name", layer.name},
          {"kind", engine::layer_kind_name(layer.kind)},
          {"tactic", layer.tactic},
          {"precision", precision},
          {"compute", layer.compute_precision()},
          {"inputs", layer.inputs},
          {"outputs", layer.outputs},
          {"input_formats", in_formats},
          {"output_formats", out_formats},
          {"weight_bytes", layer.weight_bytes},
          {"detail", layer.detail}};
}

json engine_json(const runtime::EngineSegment& segment) {
  const engine::Plan& plan = *segment.plan;
  json j = {{"node", segment.node},
            {"backend", plan.backend_name()},
            {"device", plan.device()},
            {"refittable", plan.refittable()},
            {"weights_stripped", plan.weights_missing()},
            {"workspace_bytes", plan.workspace_bytes()},
            {"plan_bytes", plan.serialized_size()}};
  json bindings = json::array();
  for (const engine::Binding& b : plan.bindings()) {
    bindings.push_back({{"name", b.name},
                        {"dtype", dtype_name(b.dtype)},
                        {"dims", dims_json(b.dims)},
                        {"input", b.is_input}});
  }
  j["bindings"] = bindings;
  json profiles = json::array();
  for (int p = 0; p < plan.num_profiles(); ++p) {
    json inputs = json::object();
    for (const auto& [name, range] : plan.profile(p).ranges()) {
      inputs[name] = {
          {"min", dims_json(range.min)}, {"opt", dims_json(range.opt)}, {"max", dims_json(range.max)}};
    }
    profiles.push_back({{"inputs", inputs}, {"arena_bytes", plan.arena_bytes(p)}});
  }
  j["profiles"] = profiles;
  json layers = json::array(), precisions = json::object(), tactics = json::object();
  uint64_t weight_bytes = 0;
  for (const engine::PlanLayerInfo& layer : plan.layers()) {
    weight_bytes += layer.weight_bytes;
    layers.push_back(layer_json(layer));
    // Layers that run a kernel (not constants, not shape arithmetic on the host).
    if (layer.kind == engine::LayerKind::Constant || layer.tactic == "host") continue;
    if (!layer.output_dtypes.empty()) {
      const std::string precision = layer.compute_precision();
      precisions[precision] = precisions.value(precision, 0) + 1;
    }
    tactics[layer.tactic] = tactics.value(layer.tactic, 0) + 1;
  }
  j["weight_bytes"] = weight_bytes;
  j["precisions"] = precisions;
  j["tactics"] = tactics;
  j["layers"] = layers;
  return j;
}

}  // namespace

json describe_module(const std::string& path, const runtime::CompiledModule& m) {
  const runtime::ModuleArchiveInfo archive = runtime::describe_module_archive(path);
  const runtime::CompiledModule* module = &m;
  json j;
  j["module"] = path;
  j["format_version"] = archive.format_version;
  j["kiln_version"] = archive.kiln_version;
  j["backend"] = module->backend();
  j["bytes"] = {
      {"file", archive.file_bytes}, {"plans", archive.plan_bytes}, {"constants", archive.constant_bytes}};
  j["inputs"] = json::array();
  for (const ir::Value* v : module->graph().inputs()) j["inputs"].push_back(tensor_json(tensor_info(*v)));
  j["outputs"] = json::array();
  for (size_t i : module->user_output_indices()) {
    j["outputs"].push_back(tensor_json(tensor_info(*module->graph().outputs()[i])));
  }
  j["settings"] =
      module->compile_settings().empty() ? json(nullptr) : json::parse(module->compile_settings());
  j["segments"] = json::array();
  for (const runtime::SegmentInfo& s : module->segments()) {
    j["segments"].push_back(
        {{"kind", s.engine ? "engine" : "torch"}, {"name", s.name}, {"nodes", s.nodes}, {"ops", s.ops}});
  }
  j["engines"] = json::array();
  for (const runtime::EngineSegment& e : module->engines()) j["engines"].push_back(engine_json(e));
  return j;
}

namespace {

std::string counts_text(const json& counts) {
  std::string text;
  for (const auto& [name, n] : counts.items()) text += (text.empty() ? "" : ", ") + name + " " + n.dump();
  return text.empty() ? "-" : text;
}

// "x: f32[s77, 3, 16, 16]" from tensor_json's object.
std::string tensor_text(const json& t) {
  std::string text = t["name"].get<std::string>() + ": " + t["dtype"].get<std::string>() + "[";
  for (size_t i = 0; i < t["shape"].size(); ++i) {
    const json& d = t["shape"][i];
    text += (i ? ", " : "") + (d.is_string() ? d.get<std::string>() : d.dump());
  }
  return text + "]";
}

std::string dims_text(const json& dims) {
  std::string text;
  for (const json& d : dims) text += (text.empty() ? "" : "x") + d.dump();
  return text.empty() ? "scalar" : text;
}

}  // namespace

void print_module_text(const json& m, bool layers, std::ostream& out) {
  out << "module: " << m["module"].get<std::string>() << " (.kiln format " << m["format_version"]
      << ", written by Kiln "
      << (m["kiln_version"].get<std::string>().empty() ? "?" : m["kiln_version"].get<std::string>()) << ")\n";
  out << "backend: " << m["backend"].get<std::string>() << "\n";
  out << "bytes: " << m["bytes"]["file"] << " (plans " << m["bytes"]["plans"] << ", constants "
      << m["bytes"]["constants"] << ")\n";
  out << "inputs:\n";
  for (const json& t : m["inputs"]) out << "  " << tensor_text(t) << "\n";
  out << "outputs:\n";
  for (const json& t : m["outputs"]) out << "  " << tensor_text(t) << "\n";
  out << "settings: " << (m["settings"].is_null() ? std::string("(not recorded)") : m["settings"].dump())
      << "\n";
  out << "segments:\n";
  for (const json& s : m["segments"]) {
    out << "  " << s["kind"].get<std::string>() << " " << s["name"].get<std::string>() << ": " << s["nodes"]
        << " nodes\n";
  }
  for (const json& e : m["engines"]) {
    out << "engine " << e["node"].get<std::string>() << " (" << e["backend"].get<std::string>() << ", device "
        << e["device"].get<std::string>() << "): " << e["layers"].size() << " layers, plan "
        << e["plan_bytes"] << " bytes, weights " << e["weight_bytes"] << " bytes, workspace "
        << e["workspace_bytes"] << " bytes\n";
    out << "  precisions: " << counts_text(e["precisions"]) << "\n";
    out << "  tactics: " << counts_text(e["tactics"]) << "\n";
    for (size_t p = 0; p < e["profiles"].size(); ++p) {
      const json& profile = e["profiles"][p];
      out << "  profile " << p << ": arena " << profile["arena_bytes"] << " bytes";
      for (const auto& [name, r] : profile["inputs"].items()) {
        out << "; " << name << " " << dims_text(r["min"]) << " .. " << dims_text(r["opt"]) << " .. "
            << dims_text(r["max"]);
      }
      out << "\n";
    }
    if (!layers) continue;
    for (const json& l : e["layers"]) {
      std::string precision;
      for (const json& d : l["precision"]) precision += (precision.empty() ? "" : ",") + d.get<std::string>();
      const std::string compute = l["compute"].get<std::string>();
      if (compute == "int8" || compute == "fp8") precision += " (" + compute + " compute)";
      std::string formats;
      for (const json& f : l["output_formats"])
        formats += (formats.empty() ? "" : ",") + f.get<std::string>();
      out << "    " << l["name"].get<std::string>() << "  " << l["kind"].get<std::string>() << "  "
          << (l["tactic"].get<std::string>().empty() ? "-" : l["tactic"].get<std::string>()) << "  "
          << precision << "  " << formats;
      if (l["weight_bytes"].get<uint64_t>() > 0) out << "  weights " << l["weight_bytes"];
      out << "\n";
    }
  }
}

}  // namespace kiln::cli
