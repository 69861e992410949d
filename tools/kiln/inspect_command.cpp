// kiln inspect MODEL.pt2 [--graph] [--lowered] [--coverage [settings flags]] [--json]
// kiln inspect MODULE.kiln [--layers] [--graph] [--json]

#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/partitioning/coverage.h"
#include "kiln/ir/text.h"
#include "kiln/runtime/module_archive.h"
#include "kiln/support/error.h"
#include "module_inspect.h"
#include "program_info.h"
#include "settings_options.h"

namespace kiln::cli {
namespace {

struct InspectOptions {
  std::string model;
  bool graph = false;
  bool lowered = false;
  bool coverage = false;
  bool json = false;
  bool layers = false;
  std::shared_ptr<SettingsFlags> flags = std::make_shared<SettingsFlags>();
};

std::string range_text(const ir::SymRange& r) {
  return "[" + std::to_string(r.min) + ", " + (r.max == ir::SymRange::kUnbounded ? "inf" : std::to_string(r.max)) +
         "]";
}

void print_text(const frontend::Program& program, const ProgramInfo& info, std::ostream& out) {
  out << "model: " << program.source_path;
  if (!program.torch_version.empty()) out << " (torch " << program.torch_version << ")";
  out << "\ninputs:\n";
  for (const TensorInfo& t : info.inputs) out << "  " << t.name << ": " << shape_text(t) << "\n";
  if (!info.symbols.empty()) {
    out << "symbols:\n";
    for (const auto& [name, range] : info.symbols) out << "  " << name << " in " << range_text(range) << "\n";
  }
  out << "outputs:\n";
  for (const TensorInfo& t : info.outputs) out << "  " << t.name << ": " << shape_text(t) << "\n";
  out << "parameters: " << info.parameters << " (" << info.parameter_bytes << " bytes; all constants "
      << info.constant_bytes << " bytes)\n";
  out << "ops: " << info.num_nodes << " nodes, " << info.ops.size() << " distinct\n";
  for (const auto& [op, count] : info.ops) out << "  " << count << "  " << op << "\n";
}

int inspect_module(const InspectOptions& options) {
  KILN_CHECK(!options.lowered && !options.coverage, InvalidInput,
             "--lowered and --coverage describe a .pt2 before compilation; '", options.model,
             "' is a compiled module (.kiln)");
  std::shared_ptr<runtime::CompiledModule> loaded = runtime::load(options.model);
  nlohmann::json module = describe_module(options.model, *loaded);
  if (options.graph) module["graph"] = ir::print_graph(loaded->graph());
  if (options.json) {
    std::cout << module.dump(2) << std::endl;
    return kExitOk;
  }
  print_module_text(module, options.layers, std::cout);
  if (options.graph) std::cout << "\n" << module["graph"].get<std::string>();
  return kExitOk;
}

}  // namespace

Action setup_inspect(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  app.add_option("model", options->model, "The .pt2 archive or the compiled module (.kiln)")->required();
  app.add_flag("--graph", options->graph, "Print the graph as IR text");
  app.add_flag("--json", options->json, "Print one JSON object instead of text");
  app.add_flag("--lowered", options->lowered,
               "Run the lowering passes first (as `kiln compile` does), so --graph, the op histogram and --coverage "
               "describe the lowered graph");
  app.add_flag("--coverage", options->coverage,
               "Report converter coverage (N/M ops supported, the reason for each unsupported op) and the partition; "
               "implies --lowered");
  app.add_flag("--layers", options->layers, "For a .kiln: one line per engine layer (the JSON always lists them)");
  add_settings_flags(app, options->flags);
  return [options]() {
    if (runtime::is_module_archive(options->model)) return inspect_module(*options);
    frontend::Program program = frontend::load_program(options->model);
    compiler::CompilationSettings settings;
    apply_settings_flags(settings, *options->flags);
    // Coverage is about what the compiler sees, which is the lowered graph.
    if (options->lowered || options->coverage) compiler::lower(*program.graph, settings);
    ProgramInfo info = describe_program(program);
    std::optional<partitioning::CoverageReport> coverage;
    if (options->coverage) coverage = partitioning::make_coverage_report(*program.graph, settings);
    if (options->json) {
      nlohmann::json j = program_info_json(info);
      if (options->graph) j["graph"] = ir::print_graph(*program.graph);
      if (coverage) j["coverage"] = nlohmann::json::parse(partitioning::coverage_to_json(*coverage));
      std::cout << j.dump(2) << std::endl;
      return kExitOk;
    }
    print_text(program, info, std::cout);
    if (coverage) std::cout << "\n" << partitioning::coverage_to_text(*coverage);
    if (options->graph) std::cout << "\n" << ir::print_graph(*program.graph);
    return kExitOk;
  };
}

}  // namespace kiln::cli
