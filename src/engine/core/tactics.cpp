#include "engine/core/tactics.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include "engine/core/int8_policy.h"
#include "engine/core/producer_formats.h"
#include "engine/core/tactic_choice.h"
#include "engine/core/timing_cache.h"
#include "engine/core/zero_volume.h"
#include "engine/ops/common.h"
#include "engine/ops/fp8.h"
#include "kiln/support/error.h"
#include "kiln/support/hash.h"
#include "kiln/support/logging.h"

namespace kiln::engine {
namespace {

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// Buffers for one timing run of a layer at the opt shape. On a backend without host-accessible memory the
/// host storage is copied into device buffers, which the args then point to.
struct TimingBuffers {
  std::vector<std::vector<uint8_t>> storage;
  std::vector<BackendBuffer> device;
  KernelArgs args;

  void to_device(const Backend& backend) {
    if (backend.host_accessible()) return;
    auto move = [&](TensorView& v, std::vector<uint8_t>& host) {
      BackendBuffer b;
      b.backend = &backend;
      b.data = backend.allocate(host.size());
      backend.copy(b.data, host.data(), host.size(), CopyKind::HostToDevice, nullptr);
      v.data = b.data;
      device.push_back(std::move(b));
    };
    size_t k = 0;
    for (auto& v : args.inputs) move(v, storage[k++]);
    for (auto& v : args.outputs) move(v, storage[k++]);
    backend.synchronize(nullptr);
  }
};

/// `info` with the tensor formats of `f` (Plain for a tensor `f` names none: all of them when `f` is empty).
LayerInfo with_formats(LayerInfo info, const TacticFormats& f) {
  for (size_t k = 0; k < info.inputs.size(); ++k)
    info.inputs[k].format = k < f.inputs.size() ? f.inputs[k] : TensorFormat::Plain;
  for (size_t k = 0; k < info.outputs.size(); ++k)
    info.outputs[k].format = k < f.outputs.size() ? f.outputs[k] : TensorFormat::Plain;
  return info;
}

TimingBuffers make_buffers(const Plan::Impl& g, int64_t li, const ConcreteShapes& opt,
                           const LayerInfo& info) {
  TimingBuffers b;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const Layer& l = g.layers[li].layer;
  auto alloc = [&](int64_t id, bool random, const TensorInfo& ti) {
    const TensorFormat format = ti.format;
    const Dims& d = opt.dims[id];
    int64_t n = format_numel(format, d);  // elements stored (blocked formats pad the channels)
    DType dt = ti.dtype;  // (an INT8 candidate's input may be timed in INT8: may_stay_int8)
    b.storage.emplace_back(static_cast<size_t>(format_bytes(format, dt, d)) + 64, 0);
    TensorView v{b.storage.back().data(), dt, d, format};
    if (format == TensorFormat::E4M3) {
      // (codes of values in the format's whole range: a quantized tensor's scale maps its range onto it)
      auto* codes = static_cast<uint8_t*>(v.data);
      for (int64_t i = 0; i < n; ++i) codes[i] = ops::float_to_e4m3(dist(rng) * ops::kE4m3Max);
    } else if (opt.values[id]) {
      std::memcpy(v.data, opt.values[id]->data(), std::min(opt.values[id]->nbytes(), v.nbytes()));
    } else if (random && is_floating(dt)) {
      for (int64_t i = 0; i < n; ++i) ops::store(v, i, dist(rng));
    } else if (random && (dt == DType::Int8 || dt == DType::UInt8) && !is_integral(g.tensors[id].dtype)) {
      auto* codes = static_cast<uint8_t*>(v.data);  // (INT8 codes of a floating tensor)
      for (int64_t i = 0; i < n; ++i) codes[i] = static_cast<uint8_t>(rng());
    } else if (random && g.tensors[id].producer >= 0 &&
               g.layers[g.tensors[id].producer].layer.kind == LayerKind::Constant) {
      const HostTensor& w = g.layers[g.tensors[id].producer].layer.weights[0].value;
      std::memcpy(v.data, w.data(), std::min(w.nbytes(), v.nbytes()));
    }
    return v;
  };
  for (size_t k = 0; k < l.inputs.size(); ++k) {
    b.args.inputs.push_back(alloc(l.inputs[k], true, info.inputs[k]));
    b.args.input_values.push_back(opt.values[l.inputs[k]] ? &*opt.values[l.inputs[k]] : nullptr);
  }
  for (size_t k = 0; k < l.outputs.size(); ++k) {
    b.args.outputs.push_back(alloc(l.outputs[k], false, info.outputs[k]));
  }
  return b;
}

/// Part of every timing-cache key: choices made by another timing method are not reused. 3: reference kernels
/// are never timed against optimized ones; warm-up until settled; at least kMinRounds interleaved rounds;
/// entries with margin, spread and load (2: device time on backends that record work, two warm-up runs; 1,
/// unmarked: wall clock throughout; caches written by either hold choices those methods got wrong).
constexpr const char* kTimingMethod = "|timing3";

/// Timed runs on a backend that records device work (cuda) replay a recording of this many runs in a row: the
/// device's time per run, without the host's launch costs. At batch 1 a legacy cuDNN call costs the host
/// more than its kernels cost the GPU, and a wall-clock choice then follows the host (resnet50's
/// convolutions: 2.3x slower on the GPU than what device time picks); inside an engine the host's costs are
/// paid ahead of the GPU or, with CUDA graphs, not at all.
constexpr int kGraphRepeats = 16;

/// Records `kGraphRepeats` runs of every candidate still timed (`Candidate::run`, `Candidate::graph`), when
/// the backend records device work; all or none, so that candidates are compared alike. A candidate whose
/// work cannot be recorded (it waits for the device, or allocates) leaves every candidate timed by wall
/// clock.
template <typename Candidate>
void record_timing_graphs(const Plan::Impl& g, std::vector<Candidate>& cands, const std::string& layer) {
  const GraphRecorder* recorder = g.backend->graph_recorder();
  if (!recorder) return;
  for (auto& c : cands) {
    if (!c.timed || c.figures.failed) continue;
    try {
      recorder->record(
          [&c](void* stream) {
            for (int r = 0; r < kGraphRepeats; ++r) c.run(stream);
          },
          c.graph);
    } catch (const std::exception& e) {
      KILN_DEBUG("engine: layer '", layer, "': tactic '", c.name(), "' cannot be recorded (", e.what(),
                 "); candidates timed by wall clock");
      for (auto& other : cands) other.graph.reset();
      return;
    }
  }
}

/// CPU time of the calling thread, in ms.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

/// Whether the machine is visibly loaded now: the calling thread, kept busy for 20 ms of wall time, got a
/// core for less than kLoadedCpuShare of it (two CPU burners on the 2-core machine: about 0.67).
bool machine_loaded_now() {
  const double cpu0 = thread_cpu_ms();
  const auto t0 = std::chrono::steady_clock::now();
  double wall = 0.0;
  volatile uint64_t sink = 0;
  while (wall < 20.0) {
    for (uint64_t i = 0; i < 10000; ++i) sink = sink + i;
    wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return (thread_cpu_ms() - cpu0) / wall < kLoadedCpuShare;
}

/// One kernel with its timing buffers (device buffers on a device backend).
struct Run {
  std::unique_ptr<Kernel> kernel;
  TimingBuffers buf;
  BackendBuffer ws;
  std::unique_ptr<KernelState> state;
  void prepare(Backend& backend, ThreadPool* pool) {
    buf.to_device(backend);
    ws.backend = &backend;
    ws.data = backend.allocate(kernel->workspace_size());
    state = kernel->create_state();
    buf.args.workspace = ws.data;
    buf.args.workspace_size = kernel->workspace_size();
    buf.args.pool = pool;
    buf.args.state = state.get();
  }
};

/// A tactic being timed: its kernel, the reformats its formats need in front of it (inputs written in another
/// format) and behind it (a plan output not written Plain), and its figures.
struct Candidate {
  Run main;
  std::vector<Run> reformats;
  CandidateFigures figures;
  bool timed = true;                   // still in the rounds
  bool quantized = false;              // Tactic::int8 or Tactic::fp8
  std::unique_ptr<DeviceGraph> graph;  // kGraphRepeats runs recorded, on a backend that records work
  double host_ms = 0.0;                // the host's time to enqueue one run (measured for plain engines)
  const std::string& name() const { return figures.tactic; }
  void run(void* stream) {
    for (auto& r : reformats) {
      r.buf.args.stream = stream;
      r.kernel->execute(r.buf.args);
    }
    main.buf.args.stream = stream;
    main.kernel->execute(main.buf.args);
  }
  size_t output_bytes() const {
    size_t n = 0;
    for (const TensorView& v : main.buf.args.outputs) n += v.nbytes();
    return n;
  }
};

/// Times one layer's candidates (optimized tactics, in preference order) at the opt shape within `budget`:
/// each warms up until its runs settle (bounded), then rounds of one run per candidate interleave them, so
/// that load from other processes hits every candidate alike; a candidate out of the running
/// (out_of_the_running) leaves them, and they end when fewer than two candidates are left. Candidates are
/// ordered by preference for choose_tactic: fewer output bytes first (no padded channel blocks), then INT8
/// tactics, then the backend's order; a layer timed again puts its previous choice first when that was made
/// on calm figures (see select_tactics).
class LayerTiming {
 public:
  /// `pool`: the threads the candidates run on while timed (the backend's, or one thread on a loaded machine:
  /// see select_tactics).
  LayerTiming(const Plan::Impl& g, const BuilderConfig& config, int64_t layer, const LayerInfo& info,
              const ConcreteShapes& opt, const std::vector<TensorFormat>& produced,
              const ContestBudget& budget, ThreadPool* pool, bool runs_plainly, std::vector<bool> int8_inputs)
      : g_(g),
        config_(config),
        layer_(layer),
        info_(info),
        opt_(opt),
        produced_(produced),
        budget_(budget),
        pool_(pool),
        runs_plainly_(runs_plainly),
        int8_inputs_(std::move(int8_inputs)) {
    conditions_.cut_short = budget.cut_short;
  }

  /// Creates and times the candidates; `first`, when one of them, goes first in the preference order.
  /// `report` collects what happened to each (for the log).
  void time(const std::vector<Tactic>& tactics, const std::string& first, std::string& report) {
    const Layer& l = g_.layers[layer_].layer;
    for (const Tactic& t : tactics) {
      Candidate c;
      c.figures.tactic = t.name;
      c.quantized = t.int8 || t.fp8;
      try {
        // An INT8 candidate reads the inputs that will stay INT8 (may_stay_int8) in INT8, as their producers
        // will write them: no quantization of its own timed, no Reformat. One that cannot read them so (the
        // cpu backend without VNNI reads no s8 tensor) is timed quantizing them itself, as it will run: the
        // tensors then stay floating (keep_int8_between_layers asks the same).
        LayerInfo base = info_;
        if (t.int8 && std::find(int8_inputs_.begin(), int8_inputs_.end(), true) != int8_inputs_.end()) {
          LayerInfo retyped = info_;
          for (size_t k = 0; k < int8_inputs_.size(); ++k) {
            if (int8_inputs_[k]) retyped.inputs[k].dtype = int8_storage(*g_.backend, *retyped.inputs[k].range);
          }
          const std::vector<Tactic> offered = g_.backend->tactics(retyped);
          if (std::any_of(offered.begin(), offered.end(), [&](const Tactic& o) { return o.name == t.name; })) {
            base = std::move(retyped);
          }
        }
        LayerInfo tinfo = with_formats(base, g_.backend->formats(base, t.name));
        c.main.kernel = g_.backend->create_kernel(tinfo, t.name);
        if (c.main.kernel->workspace_size() > config_.workspace_limit) {
          report += " " + t.name + "=skipped(workspace)";
          continue;
        }
        c.main.buf = make_buffers(g_, layer_, opt_, tinfo);
        c.main.prepare(*g_.backend, pool_);
        for (size_t k = 0; k < l.inputs.size(); ++k) {
          int64_t id = l.inputs[k];
          if (tinfo.inputs[k].format == produced_[id] || tinfo.inputs[k].dtype != info_.inputs[k].dtype) continue;
          if (producer_provides(g_, id, tinfo.inputs[k].format, config_.workspace_limit)) {
            report += " " + t.name + "+written(" + g_.tensors[id].name + " " +
                      tensor_format_name(tinfo.inputs[k].format) + ")";
            continue;  // (its producer will write it so: no Reformat)
          }
          bool seen = false;  // one reformat per tensor, however many inputs read it
          for (size_t j = 0; j < k; ++j) seen = seen || l.inputs[j] == id;
          if (seen) continue;
          c.reformats.push_back(reformat_run(id, produced_[id], tinfo.inputs[k].format));
          report += " " + t.name + "+reformat(" + g_.tensors[id].name + " " +
                    tensor_format_name(produced_[id]) + "->" + tensor_format_name(tinfo.inputs[k].format) +
                    ")";
        }
        for (size_t k = 0; k < l.outputs.size(); ++k) {
          int64_t id = l.outputs[k];
          if (g_.tensors[id].is_output && tinfo.outputs[k].format != TensorFormat::Plain) {
            c.reformats.push_back(reformat_run(id, tinfo.outputs[k].format, TensorFormat::Plain));
          }
        }
        c.figures.warm_up_ms.push_back(time_once(c));  // the first run
        cands_.push_back(std::move(c));
      } catch (const std::exception& e) {
        report += " " + t.name + "=failed(" + error_text(e) + ")";
        const auto* error = dynamic_cast<const Error*>(&e);
        if (!error || error->kind() != ErrorKind::Unsupported) ++failed_;
      }
    }
    // INT8 and FP8 tactics (offered only where the build asked for them and the layer may take them) before
    // the others of the same output size: within noise the quantized kernel, which does four times the work
    // per instruction with VNNI, is the better guess (resnet18 compiled at a load of 7 on 2 cores kept 11 of
    // 19 allowed layers in fp32 on noise: convolution_8 measured 0.38 ms INT8 against 0.67 ms fp32, within
    // the loaded machine's 2x).
    std::stable_sort(cands_.begin(), cands_.end(), [](const Candidate& a, const Candidate& b) {
      if (a.output_bytes() != b.output_bytes()) return a.output_bytes() < b.output_bytes();
      return a.quantized && !b.quantized;
    });
    std::stable_partition(cands_.begin(), cands_.end(),
                          [&](const Candidate& c) { return c.name() == first; });
    warm_up();
    if (runs_plainly_ && g_.backend->graph_recorder()) measure_enqueue();
    record_timing_graphs(g_, cands_, l.name);
    rounds();
  }

  std::vector<CandidateFigures> figures() const {
    std::vector<CandidateFigures> out;
    for (const Candidate& c : cands_) out.push_back(c.figures);
    return out;
  }
  const TimingConditions& conditions() const { return conditions_; }
  /// Candidates that failed being made or run, but for refusing the layer (TacticStats::failed).
  int failed() const { return failed_; }
  /// The kernel of candidate `name` (moved out), or null.
  std::unique_ptr<Kernel> take_kernel(const std::string& name) {
    for (Candidate& c : cands_) {
      if (c.name() == name) return std::move(c.main.kernel);
    }
    return nullptr;
  }

 private:
  static std::string error_text(const std::exception& e) {
    const auto* k = dynamic_cast<const Error*>(&e);
    return k ? k->message() : e.what();
  }

  /// One run of `c` in ms (graph launches divided by their repeats). Charges the timing thread's CPU time and
  /// the wall time to conditions_ when `rounds` (host backends only: on a device the thread waits for the
  /// GPU).
  double time_once(Candidate& c, bool rounds = false) {
    const double cpu0 = thread_cpu_ms();
    auto t0 = std::chrono::steady_clock::now();
    if (c.graph) {
      c.graph->launch(nullptr);
    } else {
      c.run(nullptr);
    }
    g_.backend->synchronize(nullptr);  // device backends run asynchronously
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = thread_cpu_ms() - cpu0;
    const bool host = g_.backend->host_accessible();
    if (rounds && host) {
      conditions_.wall_ms += wall;
      conditions_.cpu_ms += cpu;
    }
    const double ms = run_time_ms(wall, cpu, host && (pool_ == nullptr || pool_->size() == 1));
    return c.graph ? device_run_ms(ms / kGraphRepeats, c.host_ms, runs_plainly_) : ms;
  }

  /// Each candidate's host time to enqueue one run (kEnqueueCalls calls back to back, then one wait): what a
  /// run costs an engine that runs without CUDA graphs where the GPU would be faster (device_run_ms).
  void measure_enqueue() {
    constexpr int kEnqueueCalls = 8;
    for (Candidate& c : cands_) {
      if (!c.timed) continue;
      try {
        g_.backend->synchronize(nullptr);
        const auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < kEnqueueCalls; ++r) c.run(nullptr);
        c.host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
                    kEnqueueCalls;
        g_.backend->synchronize(nullptr);
        KILN_DEBUG("engine: layer '", g_.layers[layer_].layer.name, "': tactic '", c.name(), "' enqueues in ",
                   c.host_ms, " ms");
      } catch (const std::exception& e) {
        c.figures.failed = true;
        c.timed = false;
        ++failed_;
        KILN_DEBUG("engine: layer '", g_.layers[layer_].layer.name, "': tactic '", c.name(),
                   "' failed while timed: ", error_text(e));
      }
    }
  }

  /// Runs `c` once more, recording its time in `into`; a throw marks it failed.
  void run_into(Candidate& c, std::vector<double>& into, bool rounds) {
    try {
      into.push_back(time_once(c, rounds));
    } catch (const std::exception& e) {
      c.figures.failed = true;
      c.timed = false;
      ++failed_;
      KILN_DEBUG("engine: layer '", g_.layers[layer_].layer.name, "': tactic '", c.name(),
                 "' failed while timed: ", error_text(e));
    }
  }

  /// Candidates still timed.
  size_t timed_count() const {
    return static_cast<size_t>(
        std::count_if(cands_.begin(), cands_.end(), [](const Candidate& c) { return c.timed; }));
  }

  // Warm-up: the first run pays one-time costs (oneDNN's JIT, cuDNN/cuBLASLt plans, first touch of buffers:
  // 60x a reference convolution's run on a 16x16 image), later ones settle. A candidate whose first run took
  // over 25 ms and 10x the fastest first run stops there (gets_second_warm_up), and so does every candidate
  // of a contest cut short. Every candidate that did not fail goes on to the rounds: on a loaded machine
  // warm-ups stall at random (a 0.7 ms convolution's took 52 ms). A lone candidate (the others failed to
  // build) is not timed further: nothing to compare it with.
  void warm_up() {
    for (Candidate& c : cands_) c.timed = !c.figures.failed;
    if (timed_count() < 2) return;
    double best_first = 1e300;
    for (const Candidate& c : cands_) best_first = std::min(best_first, c.figures.warm_up_ms[0]);
    for (Candidate& c : cands_) {
      if (budget_.max_warm_up_runs > 1 && gets_second_warm_up(c.figures.warm_up_ms[0], best_first)) {
        double spent = 0.0;
        do {
          run_into(c, c.figures.warm_up_ms, false);
          if (c.figures.failed) break;
          spent += c.figures.warm_up_ms.back();
        } while (!warm_up_settled(c.figures.warm_up_ms) &&
                 c.figures.warm_up_ms.size() < static_cast<size_t>(budget_.max_warm_up_runs) &&
                 spent < budget_.warm_up_ms);
      }
      c.timed = !c.figures.failed;
    }
  }

  // Rounds until max(timing_iterations, kMinRounds) (kCutShortRounds when the build's budget is spent), or
  // after budget_.min_rounds once they took budget_.rounds_ms; after each, the candidates out of the running
  // leave (minima over their runs after the first, so one stall does not decide), and the rounds end when
  // fewer than two are left. Stopped by a rounds budget the build's spending shrank: cut short.
  void rounds() {
    const int rounds =
        budget_.cut_short ? budget_.min_rounds : std::max(config_.timing_iterations, kMinRounds);
    double spent = 0.0;
    for (int it = 0; it < rounds && timed_count() >= 2; ++it) {
      for (Candidate& c : cands_) {
        if (!c.timed) continue;
        run_into(c, c.figures.rounds_ms, true);
        if (!c.figures.failed) spent += c.figures.rounds_ms.back();
      }
      double fastest = 1e300;
      for (const Candidate& c : cands_) {
        if (!c.figures.failed) fastest = std::min(fastest, best_so_far(c.figures));
      }
      const bool loaded = conditions_.cpu_share() < kLoadedCpuShare;
      for (Candidate& c : cands_) c.timed = c.timed && !out_of_the_running(c.figures, fastest, loaded);
      if (spent > budget_.rounds_ms && it + 1 >= budget_.min_rounds && it + 1 < rounds) {
        if (budget_.rounds_ms < kRoundsBudgetMs && timed_count() >= 2) conditions_.cut_short = true;
        break;
      }
    }
  }

  /// A Reformat of tensor `id` from `from` to `to` at the opt shape, ready to time.
  Run reformat_run(int64_t id, TensorFormat from, TensorFormat to) {
    Layer& rl = reformat_layers_.emplace_back();
    rl.name = g_.tensors[id].name + "/reformat";
    rl.kind = LayerKind::Reformat;
    rl.params = ReformatParams{from, to};
    rl.inputs = {id};
    rl.outputs = {id};
    LayerInfo ri;
    ri.layer = &rl;
    TensorInfo t{g_.tensors[id].name, g_.tensors[id].dtype, opt_.dims[id], opt_.dims[id], opt_.dims[id], from,
                 g_.tensors[id].range};  // (a quantizing reformat scales by it)
    ri.inputs = {t};
    t.format = to;
    ri.outputs = {t};
    Run r;
    r.kernel = g_.backend->create_kernel(ri, g_.backend->tactics(ri).at(0).name);
    r.buf.storage.emplace_back(static_cast<size_t>(format_bytes(from, t.dtype, t.opt)) + 64, 0);
    r.buf.storage.emplace_back(static_cast<size_t>(format_bytes(to, t.dtype, t.opt)) + 64, 0);
    r.buf.args.inputs.push_back(TensorView{r.buf.storage[0].data(), t.dtype, t.opt, from});
    r.buf.args.outputs.push_back(TensorView{r.buf.storage[1].data(), t.dtype, t.opt, to});
    r.prepare(*g_.backend, pool_);
    return r;
  }

  const Plan::Impl& g_;
  const BuilderConfig& config_;
  int64_t layer_;
  const LayerInfo& info_;
  const ConcreteShapes& opt_;
  const std::vector<TensorFormat>& produced_;
  std::deque<Layer> reformat_layers_;  // stable addresses for the reformats' LayerInfos
  std::vector<Candidate> cands_;
  ContestBudget budget_;
  ThreadPool* pool_;
  bool runs_plainly_ =
      false;  // the engine runs without CUDA graphs: host enqueue costs count (device_run_ms)
  std::vector<bool> int8_inputs_;  // per input: read in INT8 by INT8 candidates (may_stay_int8)
  TimingConditions conditions_;
  int failed_ = 0;
};

/// The kernel of the first of `names` that builds for `info` within the workspace limit; sets `chosen`.
/// Throws the last error when none does.
std::unique_ptr<Kernel> first_that_builds(const Plan::Impl& g, const BuilderConfig& config,
                                          const LayerInfo& info, const std::vector<std::string>& names,
                                          std::string& chosen) {
  std::string errors;
  for (const std::string& name : names) {
    try {
      auto kernel = g.backend->create_kernel(with_formats(info, g.backend->formats(info, name)), name);
      if (kernel->workspace_size() > config.workspace_limit) {
        errors += " " + name + ": workspace over the limit;";
        continue;
      }
      chosen = name;
      return kernel;
    } catch (const Error& e) {
      if (&name == &names.back()) throw;
      errors += " " + name + ": " + e.message() + ";";
    }
  }
  KILN_FAIL(Unsupported, "layer '", info.layer->name, "': no tactic builds:", errors);
}

std::string figures_text(const std::vector<CandidateFigures>& figures) {
  std::ostringstream s;
  s.precision(4);
  for (const CandidateFigures& f : figures) {
    s << " " << f.tactic << "=";
    if (f.failed) {
      s << "failed";
    } else {
      s << best_time(f) << "ms(spread " << spread_of(f.rounds_ms) << (f.rounds_ms.empty() ? ", warm-up" : "")
        << ")";
    }
  }
  return s.str();
}

}  // namespace

void select_tactics(Plan::Impl& g, const BuilderConfig& config) {
  TimingCache cache(config.timing_cache_path);
  g.tactic_stats = TacticStats{};
  g.kernels.clear();
  g.kernels.resize(g.layers.size());
  g.workspace_bytes = 0;
  std::optional<ConcreteShapes> opt;  // the tensors' dims at the opt shape, inferred on first use
  auto opt_shapes = [&]() -> const ConcreteShapes& {
    if (!opt) {
      std::vector<Dims> in;
      for (int64_t id : g.inputs) in.push_back(g.profiles[0].profile.get(g.tensors[id].name).opt);
      opt = infer_concrete(g, in, DataDependentGuess::Max);
    }
    return *opt;
  };
  auto opt_empty = [&](const Layer& l) {
    for (const auto* ids : {&l.inputs, &l.outputs}) {
      for (int64_t id : *ids) {
        if (is_empty_dims(opt_shapes().dims[id])) return true;
      }
    }
    return false;
  };
  // On a loaded machine a host backend's candidates are timed on one thread: on several, every parallel
  // region waits for whichever thread was descheduled, so a contest measures how many regions a candidate
  // has, not its work (mobilenet_v3_large's stem convolution under two CPU burners: blocked 13.6 ms against
  // plain 6.3-8.7 ms, idle 0.15 ms against 1.9 ms, and the slow one won). Decided by a probe before the first
  // contest and by every contest after it; one-thread figures rank the same kernels alike, and such choices
  // are still marked loaded (uncertain) and timed again by the next build.
  ThreadPool one_thread(1);
  const bool host = g.backend->host_accessible() && g.backend->thread_pool() != nullptr &&
                    g.backend->thread_pool()->size() > 1 && config.timing_iterations > 0;
  bool loaded_machine = host && machine_loaded_now();
  if (loaded_machine) KILN_INFO("engine: the machine is loaded: tactics are timed on one thread");
  // The format each tensor will be written in, as far as tactics are chosen (layers go in order): a
  // candidate that wants another format for an input is timed together with the reformat it will need.
  std::vector<TensorFormat> produced(g.tensors.size(), TensorFormat::Plain);
  const std::vector<bool> int8_allowed = int8_allowed_layers(g, config);
  const bool has_int8 = config.allows(Precision::INT8), has_fp8 = config.allows(Precision::FP8);
  // An engine that will run without CUDA graphs (by default one with dynamic input dims; see
  // BuilderConfig::graphs_for_static) pays the host's enqueue costs at each run: on a backend that records
  // device work its contests count them (device_run_ms), and its timing-cache keys say so.
  const bool dynamic = std::any_of(g.tensors.begin(), g.tensors.end(), [](const PlanTensor& t) {
    return t.is_input && std::find(t.dims.begin(), t.dims.end(), -1) != t.dims.end();
  });
  const bool runs_plainly =
      g.backend->graph_recorder() != nullptr && !(dynamic ? config.graphs_for_dynamic : config.graphs_for_static);
  double contests_ms = 0.0;  // wall time of this build's contests so far (contest_budget)
  // Timing-cache keys this build wrote, with the index of the layer timed for each: a later layer of the same
  // signature (and input formats) finds that fresh entry in the cache, which is a reuse within this build, not
  // a choice from an earlier build's timing cache (with no cache file at all, such entries are the only ones).
  std::map<std::string, size_t> timed_here;
  // Convolutions, matrix multiplies and attention left to reference kernels (10-100x slower than optimized
  // ones): said once as a warning, with the first one's reasons (-v gives each layer's).
  int heavy_reference = 0;
  std::string first_heavy_reference;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    if (!g.is_kernel_layer(static_cast<int64_t>(i))) continue;
    const Layer& l = g.layers[i].layer;
    const std::string what = "engine: layer '" + l.name + "' (" + layer_kind_name(l.kind) + "): tactic '";
    if (always_empty(g, static_cast<int64_t>(i))) {
      g.layers[i].tactic = kEmptyTactic;
      KILN_INFO("engine: layer '", l.name, "' (", layer_kind_name(l.kind),
                "): no kernel (an empty tensor at every shape)");
      continue;
    }
    LayerInfo info = g.layer_info(static_cast<int64_t>(i));
    // The formats its inputs will come in, as assign_formats will give them: a tactic that follows its
    // input's format (the CPU's vec pointwise kernels, pooling) says so only when asked with them. Asked with
    // Plain inputs, efficientnet_b0's squeeze-excite `mul` was taken to write Plain behind its channels-last
    // input, so its consumer's plain tactic was timed without the reformat it then needed (0.12 ms timed,
    // 0.47 ms run) and the channels-last one with a reformat it never needed.
    for (size_t k = 0; k < l.inputs.size(); ++k) info.inputs[k].format = produced[l.inputs[k]];
    info.tune = config.timing_iterations > 0;
    info.reduced_precision = config.allow_reduced_precision_tactics;
    // Part of the timing-cache key: the choice depends on them, and on the formats their producers could
    // write instead (a candidate reading one of those is timed without a Reformat).
    std::string input_formats;
    for (int64_t id : l.inputs) {
      input_formats += tensor_format_name(produced[id]);
      for (int f = 1; f < kNumTensorFormats; ++f) {
        const auto format = static_cast<TensorFormat>(f);
        if (format != produced[id] && producer_provides(g, id, format, config.workspace_limit))
          input_formats += std::string("+") + tensor_format_name(format);
      }
      input_formats += ",";
    }
    std::string why;
    KILN_CHECK(g.backend->supports(info, &why), Unsupported, "layer '", l.name, "' (",
               layer_kind_name(l.kind), ") is not supported by backend ", g.backend_name, ": ", why);
    std::vector<Tactic> tactics = g.backend->tactics(info);
    if (!config.allow_reduced_precision_tactics) {
      std::erase_if(tactics, [](const Tactic& t) { return t.reduced_precision; });
    }
    // TF32 candidates (cuda fp32 matmul / convolution) only when allowed; the timing-cache key says when they
    // were.
    const bool tf32 = config.allow_tf32 &&
                      std::any_of(tactics.begin(), tactics.end(), [](const Tactic& t) { return t.tf32; });
    if (!config.allow_tf32) std::erase_if(tactics, [](const Tactic& t) { return t.tf32; });
    // INT8 / FP8 candidates only where the build asked for that precision and the INT8 policy allows the
    // layer; the timing-cache key says when they were.
    std::erase_if(tactics, [&](const Tactic& t) {
      return (t.int8 && !(int8_allowed[i] && has_int8)) || (t.fp8 && !(int8_allowed[i] && has_fp8));
    });
    const bool int8 = std::any_of(tactics.begin(), tactics.end(), [](const Tactic& t) { return t.int8; });
    const bool fp8 = std::any_of(tactics.begin(), tactics.end(), [](const Tactic& t) { return t.fp8; });
    // Explicit quantization: only the INT8 tactics are candidates (the others stay fallbacks, after them).
    const bool int8_only = int8 && config.int8_explicit;
    // The inputs INT8 candidates read in INT8 (may_stay_int8; not with explicit quantization, where there is
    // no contest); the timing-cache key says which.
    std::vector<bool> int8_inputs(l.inputs.size(), false);
    std::string int8_in;
    for (size_t k = 0; int8 && !int8_only && k < l.inputs.size(); ++k) {
      int8_inputs[k] = may_stay_int8(g, int8_allowed, l.inputs[k]);
      int8_in += int8_inputs[k] ? '1' : '0';
    }
    KILN_CHECK(!tactics.empty(), Internal, "backend ", g.backend_name, " offers no tactic for layer '",
               l.name, "'");
    // Reference kernels (kReferenceTactic) are the fallback for layers no optimized kernel takes (or whose
    // optimized kernels all fail to build), never timing candidates: a reference matmul 15x slower than
    // oneDNN won contests timed on a loaded machine. `order` is the preference order: optimized tactics as
    // the backend lists them, then the rest.
    std::vector<Tactic> optimized;
    std::vector<std::string> order;
    for (const Tactic& t : tactics) {
      if (t.name != kReferenceTactic && (t.int8 || !int8_only))
        optimized.push_back(t), order.push_back(t.name);
    }
    for (const Tactic& t : tactics) {
      if (t.name != kReferenceTactic && !t.int8 && int8_only) order.push_back(t.name);
    }
    for (const Tactic& t : tactics) {
      if (t.name == kReferenceTactic) order.push_back(t.name);
    }
    // The candidates are part of the key too: a choice made among fewer candidates (a cache written before a
    // tactic was added, the 8-warp flash attention) says nothing about the new one, which would otherwise
    // never be timed where a trusted entry exists.
    std::string candidates;
    for (const Tactic& t : optimized) candidates += "|" + t.name;
    std::string key = hex64(fnv1a64(g.device.data(), g.device.size())) + "-" + hex64([&] {
                        std::string s = layer_signature(g, static_cast<int64_t>(i)) + "|" + input_formats +
                                        candidates +
                                        (config.allow_reduced_precision_tactics ? "|reduced" : "") +
                                        (tf32 ? "|tf32" : "") + (int8 ? "|int8" : "") + (fp8 ? "|fp8" : "") +
                                        (int8_only ? "-only" : "") +
                                        (int8_in.find('1') != std::string::npos ? "|int8in" + int8_in : "") +
                                        (runs_plainly ? "|plain" : "") +
                                        kTimingMethod;
                        return fnv1a64(s.data(), s.size());
                      }());
    std::optional<TimingEntry> previous;
    if (const std::string* hit = cache.find(key)) previous = parse_timing_entry(*hit);
    if (previous && std::none_of(optimized.begin(), optimized.end(),
                                 [&](const Tactic& t) { return t.name == previous->tactic; })) {
      previous.reset();  // a tactic this build does not offer
    }
    std::string chosen;
    std::unique_ptr<Kernel> kernel;
    // A layer like one timed earlier in this build (same signature, input formats and precisions) takes that
    // choice, trusted or not: timing it again under the same conditions and budget adds no information, only
    // build time and the chance that identical layers differ on noise (resnet50 at batch 256 on cuda timed
    // each of its 53 convolutions, 22 distinct ones, 6 cuDNN engine configurations per tactic: 7-11 minutes).
    // An uncertain choice is timed again by the next build, as its cache entry says.
    const auto earlier = timed_here.find(key);
    if (optimized.size() >= 2 && config.timing_iterations > 0 && previous &&
        (earlier != timed_here.end() || timing_entry_trusted(*previous))) {
      std::vector<std::string> names{previous->tactic};
      names.insert(names.end(), order.begin(), order.end());
      // Reused within the build: the kernel starts from what the earlier layer's kernel recorded (a cuDNN
      // engine configuration, compiled code), as a plan loaded from disk would, instead of tuning again; only
      // for that tactic (a fallback after it would get another tactic's data).
      if (earlier != timed_here.end() && g.layers[earlier->second].tactic == previous->tactic &&
          !g.layers[earlier->second].kernel_data.empty()) {
        LayerInfo reuse = info;
        reuse.plan_data = &g.layers[earlier->second].kernel_data;
        try {
          kernel = first_that_builds(g, config, reuse, {previous->tactic}, chosen);
        } catch (const Error&) {
          kernel.reset();
        }
      }
      if (!kernel) kernel = first_that_builds(g, config, info, names, chosen);
      if (earlier != timed_here.end()) {
        ++g.tactic_stats.reused;
        KILN_INFO(what, chosen, "' (the timing of layer '", g.layers[earlier->second].layer.name,
                  "' of this build: same signature and input formats)");
      } else {
        ++g.tactic_stats.from_cache;
        KILN_INFO(what, chosen, "' from timing cache");
      }
    } else if (optimized.size() >= 2 && config.timing_iterations > 0 && !opt_empty(l)) {
      // (Kernels never run on empty tensors, zero_volume.h: a layer empty at the opt shape is not timed.)
      // A layer timed again puts its previous choice first in the preference order when that choice was made
      // on calm figures: a re-timing within noise keeps it (and confirms a close call), so choices do not
      // flip on noise from one build to the next. A choice made on a loaded machine or from noisy figures
      // gets no such preference (it would keep itself on noise at every build: resnet18's INT8 layers stayed
      // fp32 so).
      std::string report;
      const bool calm = previous && !previous->loaded && !previous->noisy && !previous->cut_short;
      std::optional<LayerTiming> timing;
      std::vector<CandidateFigures> figures;
      TacticChoice choice;
      for (;;) {
        report.clear();
        const ContestBudget budget = contest_budget(contests_ms);
        const auto contest_start = std::chrono::steady_clock::now();
        timing.emplace(g, config, static_cast<int64_t>(i), info, opt_shapes(), produced, budget,
                       loaded_machine ? &one_thread : g.backend->thread_pool(), runs_plainly, int8_inputs);
        timing->time(optimized, calm ? previous->tactic : std::string(), report);
        contests_ms +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - contest_start)
                .count();
        figures = timing->figures();
        choice = choose_tactic(figures, timing->conditions());
        if (!host || !choice.loaded || loaded_machine) break;
        loaded_machine = true;  // this contest again, on one thread
        KILN_INFO("engine: the machine is loaded (contest of '", l.name,
                  "'): tactics are timed on one thread");
      }
      ++g.tactic_stats.timed;
      g.tactic_stats.failed += timing->failed();
      if (cache.find(key) && earlier == timed_here.end()) ++g.tactic_stats.retimed;
      if (choice.uncertain()) ++g.tactic_stats.uncertain;
      if (choice.cut_short) ++g.tactic_stats.cut_short;
      if (!choice.tactic.empty()) {
        chosen = choice.tactic;
        kernel = timing->take_kernel(chosen);
        TimingEntry entry;
        entry.tactic = choice.tactic;
        entry.margin = choice.margin;
        entry.spread = choice.spread;
        entry.cpu_share = choice.cpu_share;
        entry.close = choice.close;
        entry.loaded = choice.loaded;
        entry.noisy = choice.noisy;
        entry.cut_short = choice.cut_short;
        entry.agreements =
            choice.uncertain() ? 0 : (previous && previous->tactic == chosen ? previous->agreements : 0) + 1;
        entry.timed_at = static_cast<int64_t>(std::time(nullptr));
        cache.put(key, format_timing_entry(entry));
        timed_here[key] = i;
        char margin[96];
        std::snprintf(margin, sizeof(margin), "margin %+.1f%%, spread %.1f%%, cpu share %.2f",
                      100 * choice.margin, 100 * choice.spread, choice.cpu_share);
        KILN_INFO(what, chosen, "' (", margin, choice.close ? ", close: preference order" : "",
                  choice.cut_short ? ", cut short by the build's timing budget" : "",
                  choice.uncertain() ? ", uncertain: timed again next build" : "", "); timed:", report,
                  figures_text(figures));
      } else {
        // Never one of the candidates: one that failed its run at the opt shape would fail the same way when
        // the plan runs. What is left is the reference kernel.
        std::vector<std::string> rest;
        for (const std::string& name : order) {
          if (std::none_of(optimized.begin(), optimized.end(),
                           [&](const Tactic& t) { return t.name == name; })) {
            rest.push_back(name);
          }
        }
        KILN_CHECK(!rest.empty(), Unsupported, "layer '", l.name, "' (", layer_kind_name(l.kind),
                   "): every tactic failed at the opt shape:", report, figures_text(figures));
        kernel = first_that_builds(g, config, info, rest, chosen);
        KILN_INFO(what, chosen, "' (every optimized candidate failed:", report, figures_text(figures), ")");
      }
    } else {
      kernel = first_that_builds(g, config, info, order, chosen);
      ++g.tactic_stats.untimed;
      // Left to the reference kernel with no optimized candidate: each one's reason (a dtype, an op).
      const std::string refused =
          chosen == kReferenceTactic && optimized.empty() ? g.backend->refusals(info, kReferenceTactic) : "";
      if (chosen == kReferenceTactic &&
          (l.kind == LayerKind::Convolution || l.kind == LayerKind::MatrixMultiply ||
           l.kind == LayerKind::Attention)) {
        if (heavy_reference++ == 0) {
          first_heavy_reference = "'" + l.name + "' (" + layer_kind_name(l.kind) + ")" +
                                  (refused.empty() ? std::string() : ": " + refused);
        }
      }
      KILN_INFO(what, chosen, "' (",
                !refused.empty()               ? "reference kernel: " + refused
                : chosen == kReferenceTactic   ? "reference kernel: no optimized kernel applies or builds"
                : optimized.size() <= 1        ? "only optimized candidate"
                : config.timing_iterations > 0 ? "not timed: an empty tensor at the opt shape"
                                               : "timing off",
                ")");
    }
    if (std::none_of(optimized.begin(), optimized.end(), [&](const Tactic& t) { return t.name == chosen; })) {
      ++g.tactic_stats.reference;
    }
    g.layers[i].tactic = chosen;
    TacticFormats formats = g.backend->formats(info, chosen);
    for (size_t k = 0; k < l.outputs.size() && k < formats.outputs.size(); ++k)
      produced[l.outputs[k]] = formats.outputs[k];
    g.workspace_bytes = std::max<uint64_t>(g.workspace_bytes, kernel->workspace_size());
    g.layers[i].kernel_data = kernel->plan_data();
    g.kernels[i] = std::move(kernel);
  }
  if (heavy_reference > 0) {
    KILN_WARN(
        "engine: ", heavy_reference,
        " convolution, matrix multiply or attention layer(s) run reference kernels, 10-100x slower than "
        "optimized ones (first: ",
        first_heavy_reference, "); -v lists each layer's reasons");
  }
  cache.save();
}

}  // namespace kiln::engine
