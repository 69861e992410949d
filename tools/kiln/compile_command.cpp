// kiln compile MODEL.pt2 -o OUT.kiln [--backend cpu|cuda] [--precision fp32|fp16|bf16|int8|fp8] [--input
// NAME=MIN:OPT:MAX]...
//              [--sample-inputs IO.npz] [partitioning flags] [--verbose]

#include <iostream>
#include <map>
#include <memory>

#include "commands.h"
#include "compiled_model.h"
#include "kiln/compiler/compile.h"
#include "kiln/compiler/npz_inputs.h"
#include "kiln/engine/plan.h"
#include "kiln/runtime/module_archive.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "output_paths.h"
#include "settings_options.h"

namespace kiln::cli {
namespace {

struct CompileCommandOptions {
  std::string model;
  std::string output;
  std::vector<std::string> precisions;
  std::vector<std::string> inputs;
  std::string sample_inputs;
  std::shared_ptr<SettingsFlags> flags = std::make_shared<SettingsFlags>();  // applied after parsing
  bool verbose = false;
};

void apply_precisions(compiler::CompilationSettings& settings, const std::vector<std::string>& precisions) {
  if (precisions.empty()) return;
  using settings::Precision;
  settings.enabled_precisions = {Precision::F32};
  const std::map<std::string, Precision> names = {{"fp32", Precision::F32},
                                                  {"fp16", Precision::F16},
                                                  {"bf16", Precision::BF16},
                                                  {"int8", Precision::I8},
                                                  {"fp8", Precision::F8}};
  for (const std::string& p : precisions) {
    const auto it = names.find(p);
    KILN_CHECK(it != names.end(), InvalidInput, "--precision '", p,
               "' is not one of fp32, fp16, bf16, int8, fp8");
    settings.enabled_precisions.insert(it->second);
  }
}

// One line for an INT8 or FP8 compile: how many convolution/matmul layers run quantized and where their
// ranges came from.
void print_quantization_summary(const compiler::CompileReport& report,
                                const compiler::CompilationSettings& settings) {
  const bool fp8_asked = settings.enabled_precisions.count(settings::Precision::F8) > 0;
  // The layers left unquantized compute in fp32 unless a half precision is enabled too (then in fp16/bf16 where
  // their tactics time faster, e.g. every layer of a cuda build with --precision fp16 int8).
  const bool half_asked = settings.enabled_precisions.count(settings::Precision::F16) > 0 ||
                          settings.enabled_precisions.count(settings::Precision::BF16) > 0;
  size_t int8 = 0, fp8 = 0, weighted = 0, calibrated = 0, cached = 0, program = 0;
  for (const compiler::EngineBuildInfo& e : report.engines) {
    if (e.calibration.empty()) continue;
    (e.calibration == "calibrated" ? calibrated : e.calibration == "program Q/DQ" ? program : cached) += 1;
    weighted += e.layers.size();
    for (const auto& l : e.layers) {
      int8 += l.precision == "int8" ? 1 : 0;
      fp8 += l.precision == "fp8" ? 1 : 0;
    }
  }
  if (calibrated + cached + program == 0) return;
  if (fp8_asked) {
    std::cout << "fp8: " << fp8 << " of " << weighted << " convolution/matmul layers in FP8";
    if (int8 > 0) std::cout << ", " << int8 << " in INT8";
  } else {
    std::cout << "int8: " << int8 << " of " << weighted << " convolution/matmul layers in INT8";
  }
  std::cout << (fp8_asked || half_asked ? " (the others floating)" : " (the others fp32)") << "; ranges "
            << (calibrated + cached == 0 ? "from the program's quantize/dequantize nodes"
                : cached == 0            ? "calibrated now"
                : calibrated == 0        ? "from the calibration cache (not calibrated again)"
                                         : "partly from the calibration cache")
            << " (--verbose lists each layer)\n";
}

// For a program with quantize/dequantize nodes: how many folded into ranges, and each one that did not, with
// its reason.
void print_qdq_summary(const compiler::CompileReport& report) {
  size_t folded = 0, total = 0;
  std::vector<std::string> unfolded;
  for (const compiler::EngineBuildInfo& e : report.engines) {
    for (const std::string& q : e.quantization) {
      ++total;
      if (q.find(": folded into") != std::string::npos) {
        ++folded;
      } else {
        unfolded.push_back(q);
      }
    }
  }
  if (total == 0) return;
  std::cout << "Q/DQ: " << folded << " of " << total
            << " quantize/dequantize pairs folded into INT8 ranges\n";
  for (const std::string& q : unfolded) std::cout << "  Q/DQ " << q << "\n";
}

int run_compile(const CompileCommandOptions& o) {
  if (o.verbose) set_log_level(LogLevel::Info);
  compiler::CompilationSettings settings;
  apply_settings_flags(settings, *o.flags);
  apply_precisions(settings, o.precisions);
  std::vector<compiler::InputSpec> specs;
  for (const std::string& text : o.inputs) specs.push_back(compiler::parse_input_spec(text));
  check_outputs({{"-o", o.output}, {"--timing-cache", settings.timing_cache_path, true}},
                {{"the model", o.model},
                 {"--sample-inputs", o.sample_inputs},
                 {"--calibration", settings.calibration}});

  frontend::Program program = frontend::load_program(o.model);
  std::vector<std::vector<HostTensor>> samples;
  if (!o.sample_inputs.empty())
    samples.push_back(compiler::pick_inputs(program.user_inputs(), o.sample_inputs));
  compiler::CompileReport report;
  std::shared_ptr<runtime::CompiledModule> module;
  {
    PhaseTimer timer("compile");
    module = compiler::compile(program, settings, specs, &report, nullptr, samples);
  }
  size_t plan_bytes = 0, cache_hits = 0, precision_notes = 0;
  engine::TacticStats tactics;
  for (const compiler::EngineBuildInfo& e : report.engines) {
    plan_bytes += e.plan_bytes;
    precision_notes += e.precision.size();
    cache_hits += e.cache_hit ? 1 : 0;
    tactics.timed += e.tactics.timed;
    tactics.retimed += e.tactics.retimed;
    tactics.uncertain += e.tactics.uncertain;
    tactics.cut_short += e.tactics.cut_short;
    tactics.from_cache += e.tactics.from_cache;
    tactics.reused += e.tactics.reused;
  }
  if (o.verbose) std::cout << report.to_string();
  if (module == nullptr) {
    std::cout << "dry run: " << report.engine_nodes << " nodes would run in engines, " << report.torch_nodes
              << " in PyTorch\n";
    return kExitOk;
  }
  runtime::save(*module, o.output);
  runtime::ModuleSummary s = module->summary();
  double total_ms = 0.0;
  for (const auto& [phase, ms] : report.phases) total_ms += ms;
  std::cout << "compiled " << o.model << " -> " << o.output << ": " << s.engine_segments << " engines ("
            << s.engine_nodes << " nodes, " << plan_bytes << " plan bytes), " << s.torch_runs << " PyTorch runs ("
            << s.torch_nodes << " nodes), " << static_cast<int64_t>(total_ms) << " ms";
  if (settings.reuse_cached_engines) std::cout << ", " << cache_hits << " engines from the cache";
  std::cout << "; tactic choices: " << tactics.from_cache << " from the timing cache, " << tactics.reused
            << " reused within the build, " << tactics.timed << " timed (" << tactics.retimed
            << " re-timed)\n";
  if (tactics.uncertain > 0) {
    std::cout << "warning: " << tactics.uncertain
              << " tactic choices were timed on a loaded machine (or from noisy runs"
              << (tactics.cut_short > 0
                      ? ", or cut short by the build's timing budget: " + std::to_string(tactics.cut_short)
                      : std::string())
              << "); the next compile times them again\n";
  }
  if (precision_notes > 0) {
    std::cout << "precision: " << precision_notes
              << " layers kept in fp32 or constants clamped by the reduced-precision policy (--verbose lists "
                 "them)\n";
  }
  print_quantization_summary(report, settings);
  print_qdq_summary(report);
  for (const std::string& f : report.fallbacks) std::cout << "warning: fell back to PyTorch: " << f << "\n";
  return kExitOk;
}

}  // namespace

std::shared_ptr<runtime::CompiledModule> with_threads(const runtime::CompiledModule& module, int threads) {
  std::vector<runtime::EngineSegment> engines = module.engines();
  engine::BackendOptions options;
  options.threads = threads;
  for (runtime::EngineSegment& e : engines) e.plan = engine::Plan::deserialize(e.plan->serialize(), options);
  auto copy = std::make_shared<runtime::CompiledModule>(module.shared_graph(), std::move(engines), module.backend());
  copy->set_output_kinds(module.output_kinds());
  copy->set_use_cuda_graphs(module.use_cuda_graphs());
  copy->set_static_shape_cuda_graphs(module.static_shape_cuda_graphs());
  copy->set_compile_settings(module.compile_settings());
  return copy;
}

LoadedModel load_or_compile(const std::string& path, int threads) {
  LoadedModel loaded;
  if (runtime::is_module_archive(path)) {
    loaded.module = runtime::load(path);
  } else {
    loaded.program = std::make_shared<frontend::Program>(frontend::load_program(path));
    PhaseTimer timer("compile");
    loaded.module = compiler::compile(*loaded.program, compiler::CompilationSettings{});
  }
  // Thread counts concern CPU engines only.
  if (threads > 0 && loaded.module->backend() == "cpu") loaded.module = with_threads(*loaded.module, threads);
  return loaded;
}

Action setup_compile(CLI::App& app) {
  auto options = std::make_shared<CompileCommandOptions>();
  app.add_option("model", options->model, "The .pt2 archive")->required();
  app.add_option("-o,--output", options->output, "The .kiln archive to write")->required();
  app.add_option("--precision", options->precisions,
                 "Precisions engines may use: fp32 (default), fp16, bf16, int8 (with --calibration, or a "
                 "program with quantize/dequantize nodes), fp8 (FP8 E4M3 matmuls on cuda GPUs of compute "
                 "capability 8.9 and up, with fp16 or bf16 and --calibration)")
      ->take_all();
  app.add_option("--input", options->inputs,
                 "Shape range of an input: NAME=MIN:OPT:MAX (shapes like 1x3x224x224) or NAME=SHAPE");
  app.add_option(
      "--sample-inputs", options->sample_inputs,
      "An .npz of inputs (input_K or named like them) an fp16/bf16 build runs to keep the layers that "
      "overflow on them in fp32");
  add_settings_flags(app, options->flags);
  app.add_flag("--verbose", options->verbose, "Log each phase and engine, print the compile report");
  return [options]() { return run_compile(*options); };
}

}  // namespace kiln::cli
