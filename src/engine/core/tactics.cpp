#include "engine/core/tactics.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "engine/core/device_graph.h"
#include "engine/reference/common.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/hash.h"
#include "kiln/support/logging.h"

namespace kiln::engine {
namespace {

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// The timing cache: "key<TAB>tactic" lines; the key hashes device and layer signature.
class TimingCache {
 public:
  explicit TimingCache(std::string path) : path_(std::move(path)) {
    if (path_.empty()) return;
    std::ifstream in(path_);
    std::string line;
    while (std::getline(in, line)) {
      auto tab = line.find('\t');
      if (tab == std::string::npos || tab == 0 || tab + 1 >= line.size()) continue;
      entries_[line.substr(0, tab)] = line.substr(tab + 1);
    }
    KILN_DEBUG("engine: timing cache '", path_, "': ", entries_.size(), " entries");
  }
  const std::string* find(const std::string& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
  }
  void put(const std::string& key, const std::string& tactic) {
    entries_[key] = tactic;
    dirty_ = true;
  }
  void save() const {
    if (path_.empty() || !dirty_) return;
    std::string text;
    for (const auto& [k, v] : entries_) text += k + '\t' + v + '\n';
    // The cache's folder is made on first use; the write is atomic so that concurrent builds never read half
    // a file. A cache that cannot be written only costs re-timing next time.
    try {
      std::filesystem::path parent = std::filesystem::path(path_).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent);
      write_file_atomic(path_, text.data(), text.size());
    } catch (const std::exception& e) {
      KILN_WARN("engine: cannot write timing cache '", path_, "': ", e.what());
    }
  }
  int hits = 0;

 private:
  std::string path_;
  std::map<std::string, std::string> entries_;
  bool dirty_ = false;
};

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

/// `info` with the tensor formats of `f` (all Plain when `f` is empty).
LayerInfo with_formats(LayerInfo info, const TacticFormats& f) {
  for (size_t k = 0; k < info.inputs.size() && k < f.inputs.size(); ++k) info.inputs[k].format = f.inputs[k];
  for (size_t k = 0; k < info.outputs.size() && k < f.outputs.size(); ++k)
    info.outputs[k].format = f.outputs[k];
  return info;
}

TimingBuffers make_buffers(const Plan::Impl& g, int64_t li, const ConcreteShapes& opt,
                           const LayerInfo& info) {
  TimingBuffers b;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const Layer& l = g.layers[li].layer;
  auto alloc = [&](int64_t id, bool random, TensorFormat format) {
    const Dims& d = opt.dims[id];
    int64_t n = format_numel(format, d);  // elements stored (blocked formats pad the channels)
    DType dt = g.tensors[id].dtype;
    b.storage.emplace_back(static_cast<size_t>(n) * dtype_size(dt) + 64, 0);
    TensorView v{b.storage.back().data(), dt, d, format};
    if (opt.values[id]) {
      std::memcpy(v.data, opt.values[id]->data(), std::min(opt.values[id]->nbytes(), v.nbytes()));
    } else if (random && is_floating(dt)) {
      for (int64_t i = 0; i < n; ++i) ref::store(v, i, dist(rng));
    } else if (random && g.tensors[id].producer >= 0 &&
               g.layers[g.tensors[id].producer].layer.kind == LayerKind::Constant) {
      const HostTensor& w = g.layers[g.tensors[id].producer].layer.weights[0].value;
      std::memcpy(v.data, w.data(), std::min(w.nbytes(), v.nbytes()));
    }
    return v;
  };
  for (size_t k = 0; k < l.inputs.size(); ++k) {
    b.args.inputs.push_back(alloc(l.inputs[k], true, info.inputs[k].format));
    b.args.input_values.push_back(opt.values[l.inputs[k]] ? &*opt.values[l.inputs[k]] : nullptr);
  }
  for (size_t k = 0; k < l.outputs.size(); ++k) {
    b.args.outputs.push_back(alloc(l.outputs[k], false, info.outputs[k].format));
  }
  return b;
}

/// A candidate whose first run took at most this long always gets a second warm-up, however much faster the
/// fastest first run was: one-time costs must not decide. oneDNN's JIT for a small matmul took 8-25 ms on a
/// loaded 2-core machine, over 200x the reference kernel's run, and the reference kernel (15x slower once
/// warm) won and was written to the timing cache.
constexpr double kAlwaysWarmUpMs = 100.0;

/// Part of every timing-cache key: choices made by another timing method are not reused. 2: device time on
/// backends that record work, the second warm-up under kAlwaysWarmUpMs (1, unmarked: wall clock throughout,
/// and caches written with it hold choices that method got wrong).
constexpr const char* kTimingMethod = "|timing2";

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
  const auto* recorder = dynamic_cast<const GraphRecorder*>(g.backend.get());
  if (!recorder) return;
  for (auto& c : cands) {
    if (!c.timed || !c.failed.empty()) continue;
    try {
      recorder->record(
          [&c](void* stream) {
            for (int r = 0; r < kGraphRepeats; ++r) c.run(stream);
          },
          c.graph);
    } catch (const std::exception& e) {
      KILN_DEBUG("engine: layer '", layer, "': tactic '", c.name, "' cannot be recorded (", e.what(),
                 "); candidates timed by wall clock");
      for (auto& other : cands) other.graph.reset();
      return;
    }
  }
}

}  // namespace

bool gets_second_warm_up(double first_ms, double best_first_ms) {
  return first_ms <= kAlwaysWarmUpMs || first_ms <= 200 * best_first_ms;
}

void select_tactics(Plan::Impl& g, const BuilderConfig& config) {
  TimingCache cache(config.timing_cache_path);
  g.kernels.clear();
  g.kernels.resize(g.layers.size());
  g.workspace_bytes = 0;
  std::optional<ConcreteShapes> opt;
  // The format each tensor will be written in, as far as tactics are chosen (layers go in order): a
  // candidate that wants another format for an input is timed together with the reformat it will need.
  std::vector<TensorFormat> produced(g.tensors.size(), TensorFormat::Plain);
  for (size_t i = 0; i < g.layers.size(); ++i) {
    if (!g.is_kernel_layer(static_cast<int64_t>(i))) continue;
    const Layer& l = g.layers[i].layer;
    LayerInfo info = g.layer_info(static_cast<int64_t>(i));
    info.tune = config.timing_iterations > 0;
    std::string input_formats;  // part of the timing-cache key: the choice depends on them
    for (int64_t id : l.inputs) input_formats += tensor_format_name(produced[id]) + std::string(",");
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
    KILN_CHECK(!tactics.empty(), Internal, "backend ", g.backend_name, " offers no tactic for layer '",
               l.name, "'");
    std::string key = hex64(fnv1a64(g.device.data(), g.device.size())) + "-" + hex64([&] {
                        std::string s = layer_signature(g, static_cast<int64_t>(i)) + "|" + input_formats +
                                        (config.allow_reduced_precision_tactics ? "|reduced" : "") +
                                        (tf32 ? "|tf32" : "") + kTimingMethod;
                        return fnv1a64(s.data(), s.size());
                      }());
    std::string chosen;
    std::unique_ptr<Kernel> kernel;
    if (const std::string* hit = cache.find(key);
        hit && std::any_of(tactics.begin(), tactics.end(), [&](const Tactic& t) { return t.name == *hit; })) {
      chosen = *hit;
      ++cache.hits;
      KILN_INFO("engine: layer '", l.name, "' (", layer_kind_name(l.kind), "): tactic '", chosen,
                "' from timing cache");
    } else if (tactics.size() == 1 || config.timing_iterations <= 0) {
      chosen = tactics[0].name;
      KILN_INFO("engine: layer '", l.name, "' (", layer_kind_name(l.kind), "): tactic '", chosen,
                "' (only candidate)");
    } else {
      if (!opt) {
        std::vector<Dims> in;
        for (int64_t id : g.inputs) in.push_back(g.profiles[0].profile.get(g.tensors[id].name).opt);
        opt = infer_concrete(g, in, DataDependentGuess::Max);
      }
      // Candidates are warmed up, then timed in rounds (one run of each per round, min per candidate), so
      // that load from other processes hits every candidate alike. The first run of a kernel pays one-time
      // costs (oneDNN's JIT, cuDNN/cuBLASLt plans, first touch of its buffers: 60x a reference convolution's
      // run on a 16x16 image), so a candidate runs a second warm-up (gets_second_warm_up) unless its first
      // took over kAlwaysWarmUpMs and was 200x slower than the fastest first run. A candidate whose warm-up
      // is 20x slower than the fastest warm-up, or whose time is 20x the best after a round, is not timed
      // further (it loses with the time it has).
      struct Run {  // one kernel with its timing buffers (device buffers on a device backend)
        std::unique_ptr<Kernel> kernel;
        TimingBuffers buf;
        BackendBuffer ws;
        std::unique_ptr<KernelState> state;
        void prepare(Backend& backend) {
          buf.to_device(backend);
          ws.backend = &backend;
          ws.data = backend.allocate(kernel->workspace_size());
          state = kernel->create_state();
          buf.args.workspace = ws.data;
          buf.args.workspace_size = kernel->workspace_size();
          buf.args.pool = backend.thread_pool();
          buf.args.state = state.get();
        }
      };
      struct Candidate {
        std::string name;
        Run main;
        std::vector<Run> reformats;  // of inputs it wants in another format than they are written in
        double t_min = 1e300;
        std::string failed;
        bool timed = true;
        std::unique_ptr<DeviceGraph> graph;  // kGraphRepeats runs recorded, on a backend that records work
        void run(void* stream) {
          for (auto& r : reformats) {
            r.buf.args.stream = stream;
            r.kernel->execute(r.buf.args);
          }
          main.buf.args.stream = stream;
          main.kernel->execute(main.buf.args);
        }
      };
      auto time_once = [&g](Candidate& c) {
        auto t0 = std::chrono::steady_clock::now();
        if (c.graph) {
          c.graph->launch(nullptr);
        } else {
          c.run(nullptr);
        }
        g.backend->synchronize(nullptr);  // device backends run asynchronously
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        return c.graph ? ms / kGraphRepeats : ms;
      };
      // A Reformat of tensor `id` from `from` to `to` at the opt shape, ready to time.
      std::deque<Layer> reformat_layers;  // stable addresses for the LayerInfos
      auto reformat_run = [&](int64_t id, TensorFormat from, TensorFormat to) {
        Layer& rl = reformat_layers.emplace_back();
        rl.name = g.tensors[id].name + "/reformat";
        rl.kind = LayerKind::Reformat;
        rl.params = ReformatParams{from, to};
        rl.inputs = {id};
        rl.outputs = {id};
        LayerInfo ri;
        ri.layer = &rl;
        TensorInfo t{g.tensors[id].name, g.tensors[id].dtype, opt->dims[id],
                     opt->dims[id],      opt->dims[id],       from};
        ri.inputs = {t};
        t.format = to;
        ri.outputs = {t};
        Run r;
        r.kernel = g.backend->create_kernel(ri, g.backend->tactics(ri).at(0).name);
        r.buf.storage.emplace_back(static_cast<size_t>(tensor_bytes(from, t.dtype, t.opt)) + 64, 0);
        r.buf.storage.emplace_back(static_cast<size_t>(tensor_bytes(to, t.dtype, t.opt)) + 64, 0);
        r.buf.args.inputs.push_back(TensorView{r.buf.storage[0].data(), t.dtype, t.opt, from});
        r.buf.args.outputs.push_back(TensorView{r.buf.storage[1].data(), t.dtype, t.opt, to});
        r.prepare(*g.backend);
        return r;
      };
      std::vector<Candidate> cands;
      std::string report;
      double best_first = 1e300, best_warm = 1e300;
      for (const Tactic& t : tactics) {
        Candidate c;
        c.name = t.name;
        try {
          // Each candidate runs in the formats it prefers, timed with the reformats that puts in front of it
          // (inputs written in another format) and behind it (a plan output not written Plain).
          LayerInfo tinfo = with_formats(info, g.backend->formats(info, t.name));
          c.main.kernel = g.backend->create_kernel(tinfo, t.name);
          if (c.main.kernel->workspace_size() > config.workspace_limit) {
            report += " " + t.name + "=skipped(workspace)";
            continue;
          }
          c.main.buf = make_buffers(g, static_cast<int64_t>(i), *opt, tinfo);
          c.main.prepare(*g.backend);
          for (size_t k = 0; k < l.inputs.size(); ++k) {
            int64_t id = l.inputs[k];
            if (tinfo.inputs[k].format == produced[id]) continue;
            bool seen = false;  // one reformat per tensor, however many inputs read it
            for (size_t j = 0; j < k; ++j) seen = seen || l.inputs[j] == id;
            if (!seen) c.reformats.push_back(reformat_run(id, produced[id], tinfo.inputs[k].format));
          }
          for (size_t k = 0; k < l.outputs.size(); ++k) {
            int64_t id = l.outputs[k];
            if (g.tensors[id].is_output && tinfo.outputs[k].format != TensorFormat::Plain) {
              c.reformats.push_back(reformat_run(id, tinfo.outputs[k].format, TensorFormat::Plain));
            }
          }
          c.t_min = time_once(c);  // first run
          best_first = std::min(best_first, c.t_min);
          cands.push_back(std::move(c));
        } catch (const Error& e) {
          report += " " + t.name + "=failed(" + e.message() + ")";
        } catch (const std::exception& e) {
          report += " " + t.name + "=failed(" + e.what() + ")";
        }
      }
      for (auto& c : cands) {  // second warm-up
        if (gets_second_warm_up(c.t_min, best_first) && config.timing_iterations > 0) {
          try {
            c.t_min = std::min(c.t_min, time_once(c));
          } catch (const Error& e) {
            c.failed = e.message();
          } catch (const std::exception& e) {
            c.failed = e.what();
          }
        }
        if (c.failed.empty()) best_warm = std::min(best_warm, c.t_min);
      }
      for (auto& c : cands) {
        c.timed = c.t_min <= 20 * best_warm && config.timing_iterations > 0;
        if (c.timed) c.t_min = 1e300;
      }
      record_timing_graphs(g, cands, l.name);
      for (int it = 0; it < config.timing_iterations; ++it) {
        double round_best = 1e300;
        for (auto& c : cands) {
          if (!c.timed || !c.failed.empty()) continue;
          try {
            c.t_min = std::min(c.t_min, time_once(c));
            round_best = std::min(round_best, c.t_min);
          } catch (const Error& e) {
            c.failed = e.message();
          } catch (const std::exception& e) {
            c.failed = e.what();
          }
        }
        // 20x slower than the best after a round: out of the running, not timed again.
        for (auto& c : cands) c.timed = c.timed && c.t_min <= 20 * round_best;
      }
      // The fastest wins; among candidates within 5% of it (timing noise), the one whose outputs take the
      // fewest bytes in its formats (e.g. no padded channel blocks), then the faster.
      double fastest = 1e300;
      for (auto& c : cands) {
        std::ostringstream s;
        if (c.failed.empty()) {
          s << " " << c.name << "=" << c.t_min << "ms" << (c.timed ? "" : "(warm-up)");
          fastest = std::min(fastest, c.t_min);
        } else {
          s << " " << c.name << "=failed(" << c.failed << ")";
        }
        report += s.str();
      }
      auto output_bytes = [](const Candidate& c) {
        size_t n = 0;
        for (const TensorView& v : c.main.buf.args.outputs) n += v.nbytes();
        return n;
      };
      Candidate* pick = nullptr;
      for (auto& c : cands) {
        if (!c.failed.empty() || c.t_min > fastest * 1.05) continue;
        if (!pick || output_bytes(c) < output_bytes(*pick) ||
            (output_bytes(c) == output_bytes(*pick) && c.t_min < pick->t_min)) {
          pick = &c;
        }
      }
      if (pick) {
        chosen = pick->name;
        kernel = std::move(pick->main.kernel);
      }
      if (chosen.empty()) chosen = tactics[0].name;
      cache.put(key, chosen);
      KILN_INFO("engine: layer '", l.name, "' (", layer_kind_name(l.kind), "): tactic '", chosen,
                "'; timed:", report);
    }
    g.layers[i].tactic = chosen;
    TacticFormats formats = g.backend->formats(info, chosen);
    for (size_t k = 0; k < l.outputs.size() && k < formats.outputs.size(); ++k)
      produced[l.outputs[k]] = formats.outputs[k];
    if (!kernel) kernel = g.backend->create_kernel(with_formats(info, formats), chosen);
    g.workspace_bytes = std::max<uint64_t>(g.workspace_bytes, kernel->workspace_size());
    g.layers[i].kernel_data = kernel->plan_data();
    g.kernels[i] = std::move(kernel);
  }
  cache.save();
}

}  // namespace kiln::engine
