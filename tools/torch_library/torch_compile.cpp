// torch.ops.kiln.compile / inspect / load_module_bytes: the compiler behind kiln.compile and kiln.inspect.

#include "torch_compile.h"

#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/partitioning/coverage.h"
#include "kiln/runtime/module_archive.h"
#include "kiln/runtime/torch_executor.h"
#include "kiln/settings/settings_json.h"
#include "kiln/support/error.h"
#include "program_info.h"

namespace kiln::torch_library {
namespace {

using json = nlohmann::json;

json parse_options(const std::string& text) {
  json options;
  try {
    options = json::parse(text);
  } catch (const json::exception& e) {
    KILN_FAIL(InvalidInput, "compile options: malformed JSON: ", e.what());
  }
  KILN_CHECK(options.is_object(), InvalidInput, "compile options: expected a JSON object");
  return options;
}

std::vector<int64_t> dims(const json& shape, const std::string& what) {
  KILN_CHECK(shape.is_array(), InvalidInput, what, ": expected a list of ints");
  std::vector<int64_t> out;
  for (const json& d : shape) {
    KILN_CHECK(d.is_number_integer(), InvalidInput, what, ": expected a list of ints, got ", d.dump());
    out.push_back(d.get<int64_t>());
  }
  return out;
}

// The options' "inputs" as compiler input specs, named after the program's inputs at their positions.
std::vector<compiler::InputSpec> input_specs(const json& options, const frontend::Program& program) {
  std::vector<compiler::InputSpec> specs;
  if (!options.contains("inputs") || options.at("inputs").is_null()) return specs;
  const json& inputs = options.at("inputs");
  KILN_CHECK(inputs.is_array(), InvalidInput, "inputs: expected a list");
  const auto& graph_inputs = program.user_inputs();
  KILN_CHECK(inputs.size() <= graph_inputs.size(), InvalidInput, "inputs: ", inputs.size(),
             " inputs given but the program takes ", graph_inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const json& in = inputs[i];
    if (in.is_null()) continue;
    KILN_CHECK(in.is_object(), InvalidInput, "inputs[", i, "]: expected a kiln.Input");
    const ir::Value* value = graph_inputs[i];
    compiler::InputSpec spec;
    spec.name =
        in.contains("name") && !in.at("name").is_null() ? in.at("name").get<std::string>() : value->name();
    if (spec.name != value->name()) {
      const ir::Value* named = nullptr;
      for (const ir::Value* v : graph_inputs) {
        if (v->name() == spec.name) named = v;
      }
      KILN_CHECK(named != nullptr, InvalidInput, "inputs[", i, "]: the program has no input named '",
                 spec.name, "'");
      value = named;
    }
    const std::string what = "input '" + spec.name + "'";
    spec.min = dims(in.at("min"), what + " min_shape");
    spec.opt = dims(in.at("opt"), what + " opt_shape");
    spec.max = dims(in.at("max"), what + " max_shape");
    if (in.contains("dtype") && !in.at("dtype").is_null() && value->is_tensor()) {
      const std::string dtype = in.at("dtype").get<std::string>();
      KILN_CHECK(dtype == dtype_name(value->meta().dtype), InvalidInput, what, ": dtype ", dtype,
                 " given but the program takes ", dtype_name(value->meta().dtype));
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

compiler::CompilationSettings settings_of(const json& options) {
  return settings::settings_from_json(options.contains("settings") ? options.at("settings") : json::object());
}

json report_json(const compiler::CompileReport& report) {
  json engines = json::array();
  for (const compiler::EngineBuildInfo& e : report.engines) {
    engines.push_back({{"segment", e.segment},
                       {"nodes", e.nodes},
                       {"network_layers", e.network_layers},
                       {"plan_layers", e.plan_layers},
                       {"plan_bytes", e.plan_bytes},
                       {"build_ms", e.build_ms},
                       {"cache_hit", e.cache_hit}});
  }
  return {{"phases", report.phases},           {"engines", engines},
          {"fallbacks", report.fallbacks},     {"engine_nodes", report.engine_nodes},
          {"torch_nodes", report.torch_nodes}, {"text", report.to_string()}};
}

}  // namespace

std::tuple<c10::intrusive_ptr<TorchModule>, std::string> compile_program(const std::string& path,
                                                                         const std::string& options_text,
                                                                         std::vector<at::Tensor> samples) {
  const json options = parse_options(options_text);
  const compiler::CompilationSettings settings = settings_of(options);
  KILN_CHECK(!settings.dryrun, InvalidInput,
             "setting 'dryrun' builds no module: use kiln.inspect for the partition");
  const frontend::Program program = frontend::load_program(path);
  const std::vector<compiler::InputSpec> specs = input_specs(options, program);
  compiler::CompileReport report;
  std::vector<std::vector<HostTensor>> sample_inputs;
  if (!samples.empty() && samples.size() == program.user_inputs().size()) {
    std::vector<HostTensor>& sample = sample_inputs.emplace_back();
    for (const at::Tensor& t : samples) sample.push_back(runtime::from_torch(t.cpu().contiguous()));
  }
  std::shared_ptr<runtime::CompiledModule> module =
      compiler::compile(program, settings, specs, &report, nullptr, sample_inputs);
  return {c10::make_intrusive<TorchModule>(std::move(module)), report_json(report).dump()};
}

std::string inspect_program(const std::string& path, const std::string& options_text) {
  const json options = parse_options(options_text);
  const compiler::CompilationSettings settings = settings_of(options);
  frontend::Program program = frontend::load_program(path);
  compiler::lower(*program.graph, settings);
  json info = cli::program_info_json(cli::describe_program(program));
  info["coverage"] = json::parse(
      partitioning::coverage_to_json(partitioning::make_coverage_report(*program.graph, settings)));
  return info.dump();
}

c10::intrusive_ptr<TorchModule> load_module_bytes(const at::Tensor& bytes) {
  KILN_CHECK(bytes.dim() == 1 && bytes.scalar_type() == at::kByte && bytes.device().is_cpu(), InvalidInput,
             "load_module_bytes: expected a 1-d uint8 CPU tensor");
  const at::Tensor contiguous = bytes.contiguous();
  std::vector<uint8_t> data(static_cast<size_t>(contiguous.numel()));
  if (!data.empty()) std::memcpy(data.data(), contiguous.data_ptr(), data.size());
  return c10::make_intrusive<TorchModule>(runtime::load_from_bytes(std::move(data), "<kiln module bytes>"));
}

}  // namespace kiln::torch_library
