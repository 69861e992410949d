#include "kiln/compiler/mutable_module.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kiln/compiler/engine_hash.h"
#include "kiln/compiler/refit.h"
#include "kiln/runtime/module_archive.h"
#include "kiln/settings/settings_json.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/json_limits.h"
#include "kiln/support/logging.h"
#include "kiln/support/npz.h"
#include "kiln/support/zip.h"

namespace kiln::compiler {
namespace {

constexpr const char* kRoot = "kiln_mutable/";
constexpr int kMutableFormatVersion = 1;

ir::Value* find_weight(const ir::Graph& graph, const std::string& name) {
  for (ir::Value* c : graph.constants()) {
    if (c->fqn() == name || (c->fqn().empty() && c->name() == name)) return c;
  }
  return nullptr;
}

}  // namespace

const char* refit_state_name(RefitState state) {
  switch (state) {
    case RefitState::Unknown: return "UNKNOWN";
    case RefitState::NeedsRefit: return "NEEDS_REFIT";
    case RefitState::NeedsRecompile: return "NEEDS_RECOMPILE";
    case RefitState::Live: return "LIVE";
  }
  return "UNKNOWN";
}

MutableModule::MutableModule(std::vector<uint8_t> program_bytes, CompilationSettings settings,
                             std::vector<InputSpec> inputs)
    : program_bytes_(std::move(program_bytes)),
      program_(frontend::load_program_from_bytes(program_bytes_)),
      settings_(std::move(settings)),
      inputs_(std::move(inputs)) {
  settings_.immutable_weights = false;  // weight updates are refits
  settings_.dryrun = false;
}

MutableModule MutableModule::from_file(const std::string& path, CompilationSettings settings,
                                       std::vector<InputSpec> inputs) {
  return MutableModule(read_file_bytes(path), std::move(settings), std::move(inputs));
}

void MutableModule::set_weights(const std::map<std::string, HostTensor>& weights) {
  for (const auto& [name, value] : weights) {
    ir::Value* c = find_weight(*program_.graph, name);
    KILN_CHECK(c != nullptr, InvalidInput, "set_weights: the program has no weight named '", name, "'");
    KILN_CHECK(value.defined() && value.dtype() == c->meta().dtype && value.describe() == c->data().describe(),
               InvalidInput, "set_weights: weight '", name, "' is ", c->data().describe(), " in the program, got ",
               value.describe(), " (a new shape or dtype needs a new export: set_program)");
  }
  for (const auto& [name, value] : weights) {
    find_weight(*program_.graph, name)->set_data(value);
    weight_overrides_[name] = value;
  }
  if (state_ == RefitState::Live) state_ = RefitState::NeedsRefit;
  KILN_INFO("mutable module: ", weights.size(), " weights updated, state ", refit_state_name(state_));
}

void MutableModule::set_program(std::vector<uint8_t> program_bytes) {
  frontend::Program next = frontend::load_program_from_bytes(program_bytes);
  const bool same_structure = canonical_segment_text(*next.graph) == canonical_segment_text(*program_.graph);
  program_bytes_ = std::move(program_bytes);
  program_ = std::move(next);
  weight_overrides_.clear();
  if (!same_structure) {
    state_ = state_ == RefitState::Unknown ? RefitState::Unknown : RefitState::NeedsRecompile;
  } else if (state_ == RefitState::Live) {
    state_ = RefitState::NeedsRefit;
  }
  KILN_INFO("mutable module: new program (", same_structure ? "same structure" : "new structure", "), state ",
            refit_state_name(state_));
}

void MutableModule::set_expected_dynamic_shape_range(std::vector<InputSpec> inputs) {
  inputs_ = std::move(inputs);
  if (state_ != RefitState::Unknown) state_ = RefitState::NeedsRecompile;
}

const runtime::CompiledModule& MutableModule::update() {
  if (state_ == RefitState::NeedsRefit) {
    try {
      module_ = refit_module_weights(*module_, program_, settings_);
      state_ = RefitState::Live;
    } catch (const Error& e) {
      KILN_WARN("mutable module: refit not possible, recompiling: ", e.message());
      state_ = RefitState::NeedsRecompile;
    }
  }
  if (state_ == RefitState::Unknown || state_ == RefitState::NeedsRecompile) {
    module_ = compile(program_, settings_, inputs_);
    state_ = RefitState::Live;
  }
  return *module_;
}

void MutableModule::widen_ranges_for(const std::vector<HostTensor>& inputs) {
  const auto& graph_inputs = program_.graph->inputs();
  for (InputSpec& spec : inputs_) {
    for (size_t i = 0; i < graph_inputs.size() && i < inputs.size(); ++i) {
      if (graph_inputs[i]->name() != spec.name || inputs[i].sizes().size() != spec.min.size()) continue;
      const std::vector<int64_t>& dims = inputs[i].sizes();
      bool widened = false;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] < spec.min[d] || dims[d] > spec.max[d]) {
          spec.min[d] = std::min(spec.min[d], dims[d]);
          spec.max[d] = std::max(spec.max[d], dims[d]);
          widened = true;
        }
      }
      if (widened && state_ != RefitState::Unknown) {
        KILN_INFO("mutable module: input '", spec.name, "' ", inputs[i].describe(),
                  " is outside the expected range; recompiling for the wider range");
        state_ = RefitState::NeedsRecompile;
      }
    }
  }
}

std::vector<HostTensor> MutableModule::execute_host(const std::vector<HostTensor>& inputs) {
  widen_ranges_for(inputs);
  return update().execute_host(inputs);
}

void MutableModule::save(const std::string& path) const {
  nlohmann::json meta;
  meta["format_version"] = kMutableFormatVersion;
  meta["settings"] = settings::settings_to_json(settings_);
  meta["state"] = refit_state_name(module_ ? state_ : RefitState::Unknown);
  nlohmann::json ranges = nlohmann::json::array();
  for (const InputSpec& s : inputs_) ranges.push_back({{"name", s.name}, {"min", s.min}, {"opt", s.opt}, {"max", s.max}});
  meta["inputs"] = ranges;
  std::vector<std::string> names;
  ZipWriter zip;
  zip.add(std::string(kRoot) + "archive_format", std::string("kiln_mutable"));
  zip.add(std::string(kRoot) + "program.pt2", program_bytes_);
  for (const auto& [name, value] : weight_overrides_) {
    zip.add(std::string(kRoot) + "weights/" + std::to_string(names.size()) + ".npy", write_npy(value));
    names.push_back(name);
  }
  meta["weights"] = names;
  if (module_) zip.add(std::string(kRoot) + "module.kiln", runtime::save_to_bytes(*module_));
  zip.add(std::string(kRoot) + "mutable.json", meta.dump(1));
  zip.write_file(path);
}

MutableModule MutableModule::load(const std::string& path) {
  ZipReader zip = ZipReader::open(path);
  const std::string root = kRoot;
  KILN_CHECK(zip.contains(root + "archive_format") && zip.read_text(root + "archive_format") == "kiln_mutable",
             InvalidInput, "'", path, "' is not a saved MutableModule (no kiln_mutable/archive_format)");
  const std::string meta_text = zip.read_text(root + "mutable.json");
  check_json_depth(meta_text, "'" + path + "': mutable.json");
  nlohmann::json meta = nlohmann::json::parse(meta_text, nullptr, false);
  KILN_CHECK(meta.is_object() && meta.value("format_version", 0) == kMutableFormatVersion, InvalidInput, "'", path,
             "': mutable.json is malformed or of another format version");
  try {
    std::vector<InputSpec> inputs;
    for (const auto& r : meta.at("inputs")) {
      inputs.push_back({r.at("name").get<std::string>(), r.at("min").get<std::vector<int64_t>>(),
                        r.at("opt").get<std::vector<int64_t>>(), r.at("max").get<std::vector<int64_t>>()});
    }
    MutableModule m(zip.read(root + "program.pt2"), settings::settings_from_json(meta.at("settings")), inputs);
    std::map<std::string, HostTensor> weights;
    const auto names = meta.at("weights").get<std::vector<std::string>>();
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string entry = root + "weights/" + std::to_string(i) + ".npy";
      weights[names[i]] = read_npy(zip.read(entry), entry);
    }
    if (!weights.empty()) m.set_weights(weights);
    const std::string state = meta.at("state").get<std::string>();
    if (zip.contains(root + "module.kiln") && state != "UNKNOWN") {
      m.module_ = runtime::load_from_bytes(zip.read(root + "module.kiln"), path + ":module.kiln");
      m.state_ = state == "LIVE" ? RefitState::Live : state == "NEEDS_REFIT" ? RefitState::NeedsRefit
                                                                              : RefitState::NeedsRecompile;
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    KILN_FAIL(InvalidInput, "'", path, "': mutable.json: ", e.what());
  }
}

}  // namespace kiln::compiler
