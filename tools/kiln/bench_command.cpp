// kiln bench MODEL.(pt2|kiln) [--inputs IO.npz | --shape NAME=DIMS...] [--iters N] [--warmup N] [--threads
// N[,N...]]
//            [--json] [--profile] [--profile-json FILE]
//
// Times the compiled module and the reference executor (the program node by node through libtorch, as eager
// PyTorch runs it) on the same inputs in the same process, and prints min/median/mean/p90/p99 latency, the
// spread and the ratio of the medians, once per thread count; warns when a spread says the figures are
// unreliable. Inputs come from an .npz, or are random with the program's shapes (dynamic dims from --shape,
// else the export's hints). A cuda module runs on the GPU: inputs are copied there once, the reference runs
// there too (every op on the module's device), and each timed call ends when the GPU has finished its work;
// where some engine runs through CUDA graphs (static shapes by default, every engine with use_cuda_graphs), the
// module is also timed without them ("kiln plain").
// With --profile, --iters more calls run with per-layer profiling (CompiledModule::set_profiling) and the
// time per layer and per layer kind is printed.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "compiled_model.h"
#include "kiln/partitioning/segments.h"
#include "kiln/runtime/torch_executor.h"
#include "kiln/support/cpu.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/logging.h"
#include "kiln/support/npz.h"
#include "latency_stats.h"
#include "layer_profile_report.h"
#include "output_paths.h"
#include "random_inputs.h"

namespace kiln::cli {
namespace {

struct BenchOptions {
  std::string model;
  std::string inputs;
  std::vector<std::string> shapes;
  int iters = 50;
  int warmup = 5;
  std::vector<int> threads = {0};
  bool json = false;
  bool profile = false;
  std::string profile_json;
};

/// What `runs` profiled calls of a module collected, and their wall time.
struct Profile {
  std::vector<engine::LayerProfileRecord> layers;
  int runs = 0;
  double wall_ms = 0.0;
};

template <typename Fn>
LatencyStats measure(Fn&& fn, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return latency_stats(std::move(ms));
}

/// The 1-minute load average and the number of cores, for the unreliable-figures warning ("" when unknown).
std::string machine_load() {
  std::ifstream in("/proc/loadavg");
  double load = 0.0;
  if (!(in >> load)) return "";
  char buf[96];
  std::snprintf(buf, sizeof(buf), "load average %.1f on %d cores", load, available_cores());
  return buf;
}

nlohmann::json stats_json(const LatencyStats& s) {
  return {{"min", s.min}, {"median", s.median}, {"mean", s.mean},
          {"p90", s.p90}, {"p99", s.p99},       {"spread", s.spread}};
}

std::string fixed3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  return buf;
}

Profile profile_module(runtime::CompiledModule& module, const std::vector<at::Tensor>& inputs, int runs) {
  module.set_profiling(true);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) {
    module.execute(inputs);
    module.synchronize();
  }
  Profile p;
  p.runs = runs;
  p.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  p.layers = module.layer_profile();
  module.set_profiling(false);
  return p;
}

/// The thread counts to time: 0 is every core available to the process (its CPU affinity); a larger count
/// only oversubscribes them (`--threads 1000` ran for over a minute on 2 cores), so it is capped with a
/// one-line warning. A count that capping repeats is timed once.
std::vector<int> thread_counts(const std::vector<int>& requested) {
  KILN_CHECK(!requested.empty(), InvalidInput, "--threads needs at least one count");
  const int cores = available_cores();
  std::vector<int> counts;
  for (int t : requested) {
    KILN_CHECK(t >= 0, InvalidInput, "--threads must not be negative");
    if (t > cores) KILN_WARN("--threads ", t, " is more than the ", cores, " cores available: using ", cores);
    const int n = t == 0 ? cores : std::min(t, cores);
    if (std::find(counts.begin(), counts.end(), n) == counts.end()) counts.push_back(n);
  }
  return counts;
}

/// What one thread count measured.
struct BenchResult {
  int threads = 0;  // CPU threads (0 for a cuda module)
  LatencyStats kiln, reference;
  std::optional<LatencyStats> plain;  // Kiln without CUDA graphs, where some engine runs through them
  double speedup = 0.0;  // reference median / kiln median
  Profile profile;
};

int run_bench(const BenchOptions& o) {
  KILN_CHECK(o.iters >= 1, InvalidInput, "--iters must be at least 1");
  KILN_CHECK(o.warmup >= 0, InvalidInput, "--warmup must not be negative");
  KILN_CHECK(o.inputs.empty() || o.shapes.empty(), InvalidInput,
             "--shape sets random inputs: not with --inputs");
  check_outputs({{"--profile-json", o.profile_json}}, {{"the model", o.model}, {"--inputs", o.inputs}});
  std::vector<int> counts = thread_counts(o.threads);
  LoadedModel model = load_or_compile(o.model);
  const runtime::CompiledModule& compiled = *model.module;
  const bool cpu = compiled.backend() == "cpu";
  if (!cpu) counts.resize(1);  // thread counts concern CPU engines only

  // The reference runs the program as exported (.pt2) or the compiled graph with its segments inlined (.kiln).
  std::unique_ptr<ir::Graph> flat;
  const ir::Graph* reference_graph = nullptr;
  if (model.program != nullptr) {
    reference_graph = model.program->graph.get();
  } else {
    flat = partitioning::flatten_partitions(compiled.graph());
    reference_graph = flat.get();
  }
  const c10::Device device(compiled.device());
  const c10::optional<c10::Device> reference_device =
      device.is_cpu() ? c10::nullopt : c10::optional<c10::Device>(device);
  runtime::TorchExecutor reference(*reference_graph, reference_device);

  std::vector<at::Tensor> inputs;
  std::vector<std::string> shapes_used;
  if (o.inputs.empty()) {
    inputs = random_inputs(compiled.graph(), o.shapes, /*seed=*/1, &shapes_used);
  } else {
    std::map<std::string, HostTensor> arrays = read_npz(o.inputs);
    for (size_t k = 0; k < compiled.graph().inputs().size(); ++k) {
      auto it = arrays.find("input_" + std::to_string(k));
      if (it == arrays.end()) it = arrays.find(compiled.graph().inputs()[k]->name());
      KILN_CHECK(it != arrays.end(), InvalidInput, "'", o.inputs, "' has neither 'input_", k, "' nor '",
                 compiled.graph().inputs()[k]->name(), "'");
      inputs.push_back(runtime::to_torch(it->second));
    }
  }
  std::vector<c10::IValue> reference_inputs;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (compiled.graph().inputs()[k]->is_tensor()) inputs[k] = inputs[k].to(device);
    reference_inputs.emplace_back(inputs[k]);
  }

  std::vector<BenchResult> results;
  for (int threads : counts) {
    at::set_num_threads(threads);
    std::shared_ptr<runtime::CompiledModule> module = cpu ? with_threads(compiled, threads) : model.module;
    BenchResult r;
    r.threads = cpu ? threads : 0;
    r.kiln = measure(
        [&]() {
          module->execute(inputs);
          module->synchronize();
        },
        o.warmup, o.iters);
    r.reference = measure(
        [&]() {
          reference.run(reference_inputs);
          module->synchronize();
        },
        o.warmup, o.iters);
    if (module->cuda_graph_engines() > 0) {  // plain execution too (--no-cuda-graphs), side by side
      const bool all = module->use_cuda_graphs(), static_shapes = module->static_shape_cuda_graphs();
      module->set_use_cuda_graphs(false);
      module->set_static_shape_cuda_graphs(false);
      r.plain = measure(
          [&]() {
            module->execute(inputs);
            module->synchronize();
          },
          o.warmup, o.iters);
      module->set_use_cuda_graphs(all);
      module->set_static_shape_cuda_graphs(static_shapes);
    }
    r.speedup = r.kiln.median > 0.0 ? r.reference.median / r.kiln.median : 0.0;
    if (o.profile || !o.profile_json.empty()) r.profile = profile_module(*module, inputs, o.iters);
    results.push_back(std::move(r));
  }
  if (!o.profile_json.empty()) {  // the profile of the last thread count
    // Atomic: a failed write (a full disk) says why and leaves no file, not even an empty one.
    const Profile& p = results.back().profile;
    const std::string text = layer_profile_json(p.layers, p.runs, p.wall_ms).dump(2) + "\n";
    write_file_atomic(o.profile_json, text.data(), text.size());
  }
  std::vector<std::string> warnings;
  for (const BenchResult& r : results) {
    for (auto [stats, who] : {std::pair{&r.kiln, "kiln"}, {&r.reference, "reference"}}) {
      if (stats->spread <= kUnreliableSpread) continue;
      char buf[200];
      std::snprintf(buf, sizeof(buf), "%s at %d threads: spread %.0f%% (p90 %.3f ms vs min %.3f ms)", who,
                    r.threads, 100 * stats->spread, stats->p90, stats->min);
      warnings.push_back(buf);
    }
  }

  if (o.json) {
    // The first thread count's figures at the top level (the keys of earlier versions), every count in
    // "runs".
    const BenchResult& first = results.front();
    nlohmann::json j;
    j["kiln_ms_median"] = first.kiln.median;
    j["kiln_ms_p90"] = first.kiln.p90;
    j["reference_ms_median"] = first.reference.median;
    j["reference_ms_p90"] = first.reference.p90;
    j["speedup"] = first.speedup;
    j["kiln"] = stats_json(first.kiln);
    if (first.plain) j["kiln_plain"] = stats_json(*first.plain);
    j["cuda_graph_engines"] = compiled.cuda_graph_engines();
    j["reference"] = stats_json(first.reference);
    j["runs"] = nlohmann::json::array();
    for (const BenchResult& r : results) {
      j["runs"].push_back({{"threads", r.threads},
                           {"kiln", stats_json(r.kiln)},
                           {"reference", stats_json(r.reference)},
                           {"speedup", r.speedup}});
    }
    if (!shapes_used.empty()) j["random_inputs"] = shapes_used;
    j["unreliable"] = warnings;
    if (o.profile) {
      const Profile& p = results.back().profile;
      j["profile"] = layer_profile_json(p.layers, p.runs, p.wall_ms);
    }
    std::cout << j.dump() << std::endl;
    return kExitOk;
  }
  std::cout << o.model << ": " << o.iters << " iterations after " << o.warmup << " warm-up"
            << (device.is_cpu() ? "" : ", on " + device.str());
  if (!shapes_used.empty()) {
    std::cout << ", random inputs";
    for (const std::string& s : shapes_used) std::cout << " " << s;
  }
  std::cout << "\n";
  for (const BenchResult& r : results) {
    if (cpu) std::cout << "threads " << r.threads << "\n";
    std::cout << "  kiln       " << format_latency(r.kiln)
              << (r.plain ? "  (" + std::to_string(compiled.cuda_graph_engines()) + " of " +
                                std::to_string(compiled.engines().size()) + " engines through CUDA graphs)"
                          : "")
              << "\n";
    if (r.plain) std::cout << "  kiln plain " << format_latency(*r.plain) << "  (no CUDA graphs)\n";
    std::cout << "  reference  " << format_latency(r.reference) << "  (libtorch eager)\n";
    std::cout << "  speedup    " << fixed3(r.speedup) << "x (reference median / kiln median)" << std::endl;
  }
  if (!warnings.empty()) {
    const std::string load = machine_load();
    std::cout << "warning: unreliable figures" << (load.empty() ? "" : " (" + load + ")")
              << ": a spread above " << static_cast<int>(100 * kUnreliableSpread)
              << "% means the medians may move that much between runs; time again on an idle machine\n";
    for (const std::string& w : warnings) std::cout << "  " << w << "\n";
  }
  if (o.profile) {
    const Profile& p = results.back().profile;
    print_layer_profile(std::cout, p.layers, p.runs, p.wall_ms);
  }
  return kExitOk;
}

}  // namespace

Action setup_bench(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  app.add_option("model", options->model, "A .pt2 program (compiled with default settings first) or a .kiln module")
      ->required();
  app.add_option("--inputs", options->inputs,
                 "An .npz with input_K arrays (or arrays named like the inputs); without it, random inputs");
  app.add_option(
         "--shape", options->shapes,
         "Shape of a random input, NAME=DIMS (e.g. x=2x10x64): binds its dynamic dims (others: the export's "
         "hints)")
      ->take_all();
  app.add_option("--iters", options->iters, "Timed iterations")->capture_default_str();
  app.add_option("--warmup", options->warmup, "Untimed iterations first")->capture_default_str();
  app.add_option(
         "--threads", options->threads,
         "CPU threads for Kiln and libtorch (0: all cores; at most the cores available, more is capped "
         "with a warning); several counts, e.g. 1,2, are timed one after the other")
      ->delimiter(',')
      ->capture_default_str();
  app.add_flag(
      "--json", options->json,
      "Print {kiln_ms_median, kiln_ms_p90, reference_ms_median, reference_ms_p90, speedup, kiln, reference, "
      "runs: [{threads, kiln, reference, speedup}], unreliable} (kiln/reference: {min, median, mean, p90, "
      "p99, spread}; \"profile\" with --profile)");
  app.add_flag(
      "--profile", options->profile,
      "Then run --iters more iterations with per-layer profiling and print the time per layer and per layer "
      "kind (each layer waits for the device; the last thread count)");
  app.add_option("--profile-json", options->profile_json,
                 "Write the per-layer profile as JSON to this file (runs the profiling iterations)");
  return [options]() { return run_bench(*options); };
}

}  // namespace kiln::cli
