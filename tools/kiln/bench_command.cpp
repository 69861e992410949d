// kiln bench MODEL.(pt2|kiln) --inputs IO.npz [--iters N] [--warmup N] [--threads N] [--json] [--profile]
//            [--profile-json FILE]
//
// Times the compiled module and the reference executor (the program node by node through libtorch, as eager
// PyTorch runs it) on the same inputs in the same process, and prints median and p90 latency and their ratio.
// A cuda module runs on the GPU: inputs are copied there once, the reference runs there too (every op on the
// module's device), and each timed call ends when the GPU has finished its work. With --profile, --iters more
// calls run with per-layer profiling (CompiledModule::set_profiling) and the time per layer and per layer
// kind is printed.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "compiled_model.h"
#include "kiln/partitioning/segments.h"
#include "kiln/runtime/torch_executor.h"
#include "kiln/support/error.h"
#include "kiln/support/npz.h"
#include "layer_profile_report.h"

namespace kiln::cli {
namespace {

struct BenchOptions {
  std::string model;
  std::string inputs;
  int iters = 50;
  int warmup = 5;
  int threads = 0;
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

struct Latency {
  double median = 0.0;
  double p90 = 0.0;
};

template <typename Fn>
Latency measure(Fn&& fn, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<size_t>(q * (ms.size() - 1) + 0.5))]; };
  return {at(0.5), at(0.9)};
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

int run_bench(const BenchOptions& o) {
  KILN_CHECK(o.iters >= 1, InvalidInput, "--iters must be at least 1");
  KILN_CHECK(o.warmup >= 0, InvalidInput, "--warmup must not be negative");
  KILN_CHECK(o.threads >= 0, InvalidInput, "--threads must not be negative");
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  LoadedModel model = load_or_compile(o.model, threads);
  const runtime::CompiledModule& module = *model.module;

  // The reference runs the program as exported (.pt2) or the compiled graph with its segments inlined (.kiln).
  std::unique_ptr<ir::Graph> flat;
  const ir::Graph* reference_graph = nullptr;
  if (model.program != nullptr) {
    reference_graph = model.program->graph.get();
  } else {
    flat = partitioning::flatten_partitions(module.graph());
    reference_graph = flat.get();
  }
  const c10::Device device(module.device());
  const c10::optional<c10::Device> reference_device =
      device.is_cpu() ? c10::nullopt : c10::optional<c10::Device>(device);
  runtime::TorchExecutor reference(*reference_graph, reference_device);

  std::map<std::string, HostTensor> arrays = read_npz(o.inputs);
  std::vector<at::Tensor> inputs;
  std::vector<c10::IValue> reference_inputs;
  for (size_t k = 0; k < module.graph().inputs().size(); ++k) {
    auto it = arrays.find("input_" + std::to_string(k));
    if (it == arrays.end()) it = arrays.find(module.graph().inputs()[k]->name());
    KILN_CHECK(it != arrays.end(), InvalidInput, "'", o.inputs, "' has neither 'input_", k, "' nor '",
               module.graph().inputs()[k]->name(), "'");
    const bool tensor_input = module.graph().inputs()[k]->is_tensor();
    inputs.push_back(tensor_input ? runtime::to_torch(it->second).to(device) : runtime::to_torch(it->second));
    reference_inputs.emplace_back(inputs.back());
  }

  Latency kiln = measure(
      [&]() {
        module.execute(inputs);
        module.synchronize();
      },
      o.warmup, o.iters);
  Latency ref = measure(
      [&]() {
        reference.run(reference_inputs);
        module.synchronize();
      },
      o.warmup, o.iters);
  const double speedup = kiln.median > 0.0 ? ref.median / kiln.median : 0.0;
  Profile profile;
  if (o.profile || !o.profile_json.empty()) profile = profile_module(*model.module, inputs, o.iters);
  if (!o.profile_json.empty()) {
    std::ofstream file(o.profile_json);
    file << layer_profile_json(profile.layers, profile.runs, profile.wall_ms).dump(2) << "\n";
    KILN_CHECK(file.good(), Io, "cannot write the profile to '", o.profile_json, "'");
  }

  if (o.json) {
    nlohmann::json j;
    j["kiln_ms_median"] = kiln.median;
    j["kiln_ms_p90"] = kiln.p90;
    j["reference_ms_median"] = ref.median;
    j["reference_ms_p90"] = ref.p90;
    j["speedup"] = speedup;
    if (o.profile) j["profile"] = layer_profile_json(profile.layers, profile.runs, profile.wall_ms);
    std::cout << j.dump() << std::endl;
    return kExitOk;
  }
  std::cout << o.model << ": " << o.iters << " iterations after " << o.warmup << " warm-up, "
            << (device.is_cpu() ? std::to_string(threads) + " threads" : "on " + device.str()) << "\n";
  std::cout << "  kiln       median " << fixed3(kiln.median) << " ms  p90 " << fixed3(kiln.p90) << " ms\n";
  std::cout << "  reference  median " << fixed3(ref.median) << " ms  p90 " << fixed3(ref.p90)
            << " ms  (libtorch eager)\n";
  std::cout << "  speedup    " << fixed3(speedup) << "x (reference median / kiln median)" << std::endl;
  if (o.profile) print_layer_profile(std::cout, profile.layers, profile.runs, profile.wall_ms);
  return kExitOk;
}

}  // namespace

Action setup_bench(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  app.add_option("model", options->model, "A .pt2 program (compiled with default settings first) or a .kiln module")
      ->required();
  app.add_option("--inputs", options->inputs, "An .npz with input_K arrays (or arrays named like the inputs)")
      ->required();
  app.add_option("--iters", options->iters, "Timed iterations")->capture_default_str();
  app.add_option("--warmup", options->warmup, "Untimed iterations first")->capture_default_str();
  app.add_option("--threads", options->threads, "CPU threads for Kiln and libtorch (0: all cores)")
      ->capture_default_str();
  app.add_flag(
      "--json", options->json,
      "Print {kiln_ms_median, kiln_ms_p90, reference_ms_median, reference_ms_p90, speedup} (and \"profile\" "
      "with --profile)");
  app.add_flag(
      "--profile", options->profile,
      "Then run --iters more iterations with per-layer profiling and print the time per layer and per layer "
      "kind (each layer waits for the device)");
  app.add_option("--profile-json", options->profile_json,
                 "Write the per-layer profile as JSON to this file (runs the profiling iterations)");
  return [options]() { return run_bench(*options); };
}

}  // namespace kiln::cli
