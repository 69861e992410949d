// compiler::compile: lowering -> partitioning -> conversion -> build -> CompiledModule.

#include "kiln/compiler/compile.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>

#include "compiler/calibration_cache.h"
#include "compiler/engine_cache_entry.h"
#include "compiler/segment_fallback.h"
#include "kiln/compiler/engine_cache.h"
#include "kiln/compiler/engine_hash.h"
#include "kiln/compiler/npz_inputs.h"
#include "kiln/conversion/interpreter.h"
#include "kiln/conversion/segment_conversion.h"
#include "kiln/engine/builder.h"
#include "kiln/ir/segment.h"
#include "kiln/lowering/pass_manager.h"
#include "kiln/partitioning/partitioners.h"
#include "kiln/partitioning/segments.h"
#include "kiln/settings/settings_json.h"
#include "kiln/support/error.h"
#include "kiln/support/hash.h"
#include "kiln/support/logging.h"

namespace kiln::compiler {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string format_ms(double ms) {
  std::ostringstream out;
  out.precision(ms < 10 ? 2 : 1);
  out << std::fixed << ms << " ms";
  return out.str();
}

// Narrows the program's symbol ranges and hints to the user's input specs (checked against the program).
void apply_input_specs(ir::Graph& graph, const std::vector<InputSpec>& specs) {
  if (specs.empty()) return;
  std::map<std::string, engine::ShapeRange> ranges;
  for (const InputSpec& s : specs) {
    bool found = false;
    for (const ir::Value* in : graph.inputs()) found = found || in->name() == s.name;
    KILN_CHECK(found, InvalidInput, "input spec names '", s.name, "', which is not an input of the program");
    for (size_t d = 0; d < s.min.size(); ++d) {
      KILN_CHECK(s.min[d] <= s.opt[d] && s.opt[d] <= s.max[d] && s.min[d] >= 0, InvalidInput, "input spec for '",
                 s.name, "' dim ", d, ": need 0 <= min <= opt <= max, got ", s.min[d], ":", s.opt[d], ":", s.max[d]);
    }
    ranges[s.name] = engine::ShapeRange{s.min, s.opt, s.max};
  }
  for (const ir::Value* in : graph.inputs()) {
    auto it = ranges.find(in->name());
    if (it == ranges.end() || !in->is_tensor()) continue;
    for (int64_t d = 0; d < in->meta().rank() && d < static_cast<int64_t>(it->second.min.size()); ++d) {
      auto fixed = in->meta().sizes[static_cast<size_t>(d)].as_int();
      if (!fixed) continue;
      KILN_CHECK(it->second.min[d] == *fixed && it->second.max[d] == *fixed, InvalidInput, "input spec for '",
                 in->name(), "' dim ", d, " asks for a range but the program fixes it to ", *fixed,
                 " (export with a dynamic dim to vary it)");
    }
  }
  auto [symbol_ranges, hints] = conversion::symbol_ranges_from_specs(graph, ranges);
  for (const auto& [symbol, range] : symbol_ranges) {
    auto current = graph.symbol_ranges().find(symbol);
    if (current != graph.symbol_ranges().end()) {
      const ir::SymRange& r = current->second;
      KILN_CHECK(range.min >= r.min && range.max <= r.max, InvalidInput, "input spec range [", range.min, ", ",
                 range.max, "] of ", symbol, " lies outside the range the program was exported for [", r.min, ", ",
                 r.max == ir::SymRange::kUnbounded ? std::string("inf") : std::to_string(r.max), "]");
    }
    graph.symbol_ranges()[symbol] = range;
  }
  for (const auto& [symbol, hint] : hints) graph.symbol_hints()[symbol] = hint;
}

// The engine cache a compile uses: the caller's, else a DiskEngineCache when the settings ask for caching.
struct CacheUse {
  EngineCache* cache = nullptr;
  std::unique_ptr<DiskEngineCache> owned;
  std::string device;  // the backend's device string (part of the hash)
};

CacheUse open_cache(const CompilationSettings& settings, EngineCache* user_cache) {
  CacheUse use;
  if (!settings.cache_built_engines && !settings.reuse_cached_engines) return use;
  KILN_CHECK(!settings.immutable_weights, InvalidInput,
             "the engine cache stores weightless engines and refits them: set immutable_weights=false (kiln compile "
             "--cache-dir does) to use cache_built_engines or reuse_cached_engines");
  if (user_cache != nullptr) {
    use.cache = user_cache;
  } else {
    const std::string dir = settings.engine_cache_dir.empty() ? default_engine_cache_dir() : settings.engine_cache_dir;
    use.owned = std::make_unique<DiskEngineCache>(dir, settings.engine_cache_size);
    use.cache = use.owned.get();
  }
  use.device = engine::create_backend(settings.backend, engine::BackendOptions{settings.threads})->device();
  return use;
}

// The sample values of `node`'s inputs, per sample (`samples`: per sample, one value per input of `top`);
// empty when an input of the segment is not a program input (its value is not known at build time).
std::vector<std::vector<HostTensor>> segment_values(const ir::Graph& top, const ir::Node& node,
                                                    const std::vector<std::vector<HostTensor>>& samples,
                                                    const char* what) {
  if (samples.empty()) return {};
  std::vector<size_t> index;
  for (const ir::Value* v : node.inputs()) {
    auto it = std::find(top.inputs().begin(), top.inputs().end(), v);
    if (it == top.inputs().end()) {
      KILN_INFO("engine ", node.name(), ": ", what, " not used: input '", v->name(),
                "' is computed, not a program input");
      return {};
    }
    index.push_back(static_cast<size_t>(it - top.inputs().begin()));
  }
  std::vector<std::vector<HostTensor>> out;
  for (const std::vector<HostTensor>& sample : samples) {
    std::vector<HostTensor>& picked = out.emplace_back();
    for (size_t k : index) picked.push_back(sample[k]);
  }
  return out;
}

// The sample inputs of the sample-input check of `node` (segment_values; none for an fp32-only build).
std::vector<std::vector<HostTensor>> segment_samples(const ir::Graph& top, const ir::Node& node,
                                                     const CompilationSettings& settings,
                                                     const std::vector<std::vector<HostTensor>>& samples) {
  const std::vector<engine::Precision> precisions = conversion::engine_precisions(settings);
  const bool reduced = std::count(precisions.begin(), precisions.end(), engine::Precision::FP16) +
                           std::count(precisions.begin(), precisions.end(), engine::Precision::BF16) >
                       0;
  return reduced ? segment_values(top, node, samples, "sample inputs")
                 : std::vector<std::vector<HostTensor>>{};
}

// Whether lowering left fake quantization (the form of the program's Q/DQ nodes) in `graph`.
bool has_fake_quantize(const ir::Graph& graph) {
  for (const ir::Node* n : graph.nodes()) {
    if (n->target().ns == "aten" && n->target().name.rfind("fake_quantize_per_", 0) == 0) return true;
  }
  return false;
}

// The engine-cache key of an INT8 segment: its engine hash and the dynamic ranges it is built with.
std::string int8_engine_hash(const std::string& hash, const detail::DynamicRanges& ranges) {
  Sha256 sha;
  sha.update(hash + "\nint8 ranges " + detail::ranges_text(ranges));
  return sha.hex_digest();
}

// The precision of each convolution / matrix-multiply layer of `plan`, for the report.
std::vector<EngineBuildInfo::LayerPrecision> layer_precisions(const engine::Plan& plan) {
  std::vector<EngineBuildInfo::LayerPrecision> out;
  for (const engine::PlanLayerInfo& l : plan.layers()) {
    if (l.kind != engine::LayerKind::Convolution && l.kind != engine::LayerKind::MatrixMultiply) continue;
    out.push_back({l.name, l.compute_precision(), l.tactic});
  }
  return out;
}

// Converts and builds one engine segment (conversion::convert_segment), or takes it from the engine cache and
// refits it; timed for the report. With sample values for its inputs the engine cache is not read (a cached
// engine was not checked on them).
runtime::EngineSegment build_segment(const ir::Graph& top, const ir::Node& node,
                                     const CompilationSettings& settings, const CacheUse& cache,
                                     const std::vector<std::vector<HostTensor>>& samples,
                                     const std::vector<std::vector<HostTensor>>& calibration_batches,
                                     EngineBuildInfo& info) {
  const std::vector<std::vector<HostTensor>> node_samples = segment_samples(top, node, settings, samples);
  conversion::InterpreterOptions options;
  options.symbol_ranges = top.symbol_ranges();
  options.symbol_hints = top.symbol_hints();
  auto start = Clock::now();
  runtime::EngineSegment segment;
  segment.node = node.name();
  // INT8: the segment's dynamic ranges from the calibration cache, else calibrated while it is converted.
  std::optional<conversion::SegmentCalibration> calibration;
  std::string calibration_key, calibration_dir;
  if (std::vector<std::vector<HostTensor>> batches =
          segment_values(top, node, calibration_batches, "calibration data");
      !batches.empty()) {
    calibration.emplace();
    calibration->config.calibrator = engine::parse_calibrator(settings.calibrator);
    calibration->config.percentile = settings.calibration_percentile;
    calibration_key =
        detail::calibration_key(engine_segment_hash(*node.subgraph(), options.symbol_ranges,
                                                    options.symbol_hints, settings, settings.backend),
                                *node.subgraph(), batches);
    calibration_dir = detail::calibration_cache_dir(settings);
    calibration->ranges = detail::load_calibration(calibration_dir, calibration_key);
    calibration->batches = std::move(batches);
    info.calibration = calibration->ranges ? "calibration cache" : "calibrated";
    KILN_INFO("engine ", node.name(), ": quantization ranges ",
              calibration->ranges ? "from the calibration cache (" : "calibrated now (",
              calibration_key.substr(0, 12), ")");
  }
  std::string hash;
  if (cache.cache != nullptr) {
    hash = engine_segment_hash(*node.subgraph(), options.symbol_ranges, options.symbol_hints, settings, cache.device);
    if (calibration && calibration->ranges) hash = int8_engine_hash(hash, *calibration->ranges);
    // (an INT8 segment not calibrated yet has no key to look up)
    if (settings.reuse_cached_engines && node_samples.empty() && (!calibration || calibration->ranges)) {
      if (std::optional<std::vector<uint8_t>> blob = cache.cache->load(hash)) {
        try {
          detail::CachedEngine cached = detail::load_cache_entry(*blob, *node.subgraph(), settings.strip_engine_weights,
                                                                     engine::BackendOptions{settings.threads});
          segment.plan = std::move(cached.plan);
          segment.input_bindings = std::move(cached.input_bindings);
          segment.output_bindings = std::move(cached.output_bindings);
          if (info.calibration.empty() && cached.program_ranges) info.calibration = "program Q/DQ";
          info.quantization = std::move(cached.quantization_notes);
          info.precision = std::move(cached.precision_notes);
          info.cache_hit = true;
          KILN_INFO("engine ", node.name(), ": cache hit (", hash.substr(0, 12), "), refitted with the program's weights");
        } catch (const Error& e) {
          KILN_WARN("engine ", node.name(), ": cache entry ", hash.substr(0, 12), " not usable, building: ", e.message());
        }
      } else {
        KILN_INFO("engine ", node.name(), ": cache miss (", hash.substr(0, 12), ")");
      }
    }
  }
  if (segment.plan == nullptr) {
    CompilationSettings build_settings = settings;
    if (cache.cache != nullptr) build_settings.immutable_weights = false;
    conversion::BuiltSegment built = conversion::convert_segment(
        node, build_settings, options, nullptr, node_samples, calibration ? &*calibration : nullptr);
    if (built.calibrated) {
      detail::save_calibration(calibration_dir, calibration_key, built.dynamic_ranges);
      if (cache.cache != nullptr) hash = int8_engine_hash(hash, built.dynamic_ranges);
    }
    if (info.calibration.empty() && !built.program_ranges.empty()) info.calibration = "program Q/DQ";
    info.quantization = std::move(built.quantization_notes);
    info.network_layers = static_cast<size_t>(built.network_layers);
    segment.plan = std::move(built.plan);
    segment.input_bindings = std::move(built.input_bindings);
    segment.output_bindings = std::move(built.output_bindings);
    // An engine cache hit reuses the engine as built, uncertain tactic choices included (the timing cache
    // marks them for the next build that times); `kiln cache clear --engines` drops it.
    info.tactics = engine::tactic_stats(*segment.plan);
    info.precision = engine::precision_notes(*segment.plan);
    if (cache.cache != nullptr && settings.cache_built_engines) {
      cache.cache->save(hash, detail::make_cache_entry({segment.plan, segment.input_bindings, segment.output_bindings,
                                                        !built.program_ranges.empty(), info.quantization,
                                                        info.precision},
                                                       *node.subgraph()));
    }
  }
  info.build_ms = ms_since(start);
  info.plan_layers = segment.plan->layers().size();
  info.layers = layer_precisions(*segment.plan);
  info.plan_bytes = segment.plan->serialized_size();
  return segment;
}

// `requested` with its calibrator "auto" resolved: percentile where INT8 is among the precisions (on resnet18
// it measured 40.7 dB where entropy gave 13.5), else max (FP8: E4M3's range holds the tails percentile clips,
// vit_b_16 19.4 -> 21.3 dB; and builds without quantization keep the engine-cache keys they had when
// percentile was the default). Everything downstream (cache keys, the module's recorded settings) sees the
// resolved name.
CompilationSettings resolve_calibrator(const CompilationSettings& requested) {
  CompilationSettings settings = requested;
  if (settings.calibrator == "auto") {
    const bool fp8_only = settings.enabled_precisions.count(settings::Precision::F8) > 0 &&
                          settings.enabled_precisions.count(settings::Precision::I8) == 0;
    settings.calibrator = fp8_only ? "max" : "percentile";
  }
  return settings;
}

}  // namespace

std::vector<std::string> precision_names(const CompilationSettings& settings) {
  std::vector<std::string> names;
  for (engine::Precision p : conversion::engine_precisions(settings))
    names.push_back(engine::precision_name(p));
  return names;
}

std::string CompileReport::to_string() const {
  std::ostringstream out;
  for (const auto& [phase, ms] : phases) out << phase << ": " << format_ms(ms) << "\n";
  for (const EngineBuildInfo& e : engines) {
    if (e.cache_hit) {
      out << "engine " << e.segment << ": " << e.nodes << " nodes, cache hit, " << e.plan_layers
          << " plan layers, plan " << e.plan_bytes << " bytes, load+refit " << format_ms(e.build_ms) << "\n";
    } else {
      out << "engine " << e.segment << ": " << e.nodes << " nodes, " << e.network_layers << " layers -> "
          << e.plan_layers << " after fusion ("
          << (e.network_layers - std::min(e.network_layers, e.plan_layers)) << " fused or folded), plan "
          << e.plan_bytes << " bytes, convert+build " << format_ms(e.build_ms)
          << "; tactics: " << e.tactics.timed << " timed (" << e.tactics.retimed << " re-timed, "
          << e.tactics.uncertain << " uncertain, " << e.tactics.cut_short << " cut short), "
          << e.tactics.from_cache << " from the timing cache, " << e.tactics.reused
          << " reused within the build, " << e.tactics.untimed << " untimed, " << e.tactics.reference
          << " reference"
          << (e.tactics.failed > 0 ? "; " + std::to_string(e.tactics.failed) + " candidates failed"
                                   : std::string())
          << "\n";
    }
    for (const engine::PrecisionNote& p : e.precision)
      out << "  precision: " << p.layer << ": " << p.reason << "\n";
    for (const std::string& q : e.quantization) out << "  Q/DQ: " << q << "\n";
    if (e.calibration.empty()) continue;
    out << "  int8 ranges: " << e.calibration << "\n";
    for (const EngineBuildInfo::LayerPrecision& l : e.layers)
      out << "  layer " << l.layer << ": " << l.precision << " (" << l.tactic << ")\n";
  }
  for (const std::string& f : fallbacks) out << "fallback to PyTorch: " << f << "\n";
  out << "nodes: " << engine_nodes << " in engines, " << torch_nodes << " in PyTorch\n";
  return out.str();
}

void lower(ir::Graph& graph, const CompilationSettings& settings) {
  lowering::PassContext context;
  // Decompositions apply only to ops no converter takes, as the registry answers under these settings.
  context.has_converter = [&settings](const ir::Node& node) {
    return conversion::converters().contains(node, settings);
  };
  context.verify_each_pass = settings.debug;
  lowering::apply_lowering_passes(graph, context);
}

std::shared_ptr<runtime::CompiledModule> compile(const frontend::Program& program,
                                                 const CompilationSettings& requested,
                                                 const std::vector<InputSpec>& inputs, CompileReport* report,
                                                 EngineCache* engine_cache,
                                                 const std::vector<std::vector<HostTensor>>& sample_inputs) {
  const CompilationSettings settings = resolve_calibrator(requested);
  KILN_CHECK(program.graph != nullptr, InvalidInput, "compile: the program has no graph");
  for (const std::vector<HostTensor>& sample : sample_inputs) {
    KILN_CHECK(sample.size() == program.graph->inputs().size(), InvalidInput, "compile: a sample has ",
               sample.size(), " inputs, the program ", program.graph->inputs().size());
  }
  const std::vector<engine::Precision> precisions = conversion::engine_precisions(settings);
  (void)conversion::builder_config_from_settings(settings);  // rejects a bad thread count before any work
  CompileReport local;
  CompileReport& r = report != nullptr ? *report : local;
  r = CompileReport{};

  std::unique_ptr<ir::Graph> graph = program.graph->clone();
  apply_input_specs(*graph, inputs);

  {
    PhaseTimer timer("lowering");
    lower(*graph, settings);
    r.phases.emplace_back("lowering", timer.elapsed_ms());
  }

  std::unique_ptr<ir::Graph> partitioned;
  {
    PhaseTimer timer("partitioning");
    partitioning::PartitionResult result = partitioning::partition(*graph, settings);
    partitioned = std::move(result.graph);
    KILN_INFO("partitioning: ", result.support.supported, "/", result.support.total, " nodes supported");
    r.phases.emplace_back("partitioning", timer.elapsed_ms());
  }
  if (settings.dryrun) {
    for (const partitioning::SegmentInfo& s : partitioning::describe_segments(*partitioned)) {
      (s.engine ? r.engine_nodes : r.torch_nodes) += s.nodes.size();
    }
    KILN_INFO("dry run: ", r.engine_nodes, " nodes would run in engines, ", r.torch_nodes, " in PyTorch");
    return nullptr;
  }

  std::vector<std::vector<HostTensor>> calibration_batches;
  const bool int8 = std::count(precisions.begin(), precisions.end(), engine::Precision::INT8) > 0;
  const bool fp8 = std::count(precisions.begin(), precisions.end(), engine::Precision::FP8) > 0;
  if (int8 || fp8) {
    // A program with quantize/dequantize nodes brings its own INT8 ranges (docs/quantization.md, precision
    // rules); FP8 is calibrated.
    const bool explicit_quantization = int8 && has_fake_quantize(*graph);
    KILN_CHECK(
        !settings.calibration.empty() || explicit_quantization, InvalidInput,
        int8 ? "int8 needs calibration data or quantize/dequantize nodes in the program: pass --calibration "
               "FILE.npz (the `calibration` setting)"
             : "fp8 needs calibration data: pass --calibration FILE.npz (the `calibration` setting)");
    if (fp8 && settings.enabled_precisions.count(settings::Precision::F16) == 0 &&
        settings.enabled_precisions.count(settings::Precision::BF16) == 0) {
      KILN_WARN("fp8: FP8 matrix multiplies write fp16 or bf16, and neither is among the precisions: no layer "
                "of an fp32 build takes FP8 (add fp16 or bf16)");
    }
    if (explicit_quantization && !settings.calibration.empty()) {
      KILN_WARN("the program carries quantize/dequantize nodes: INT8 ranges come from them, --calibration ",
                settings.calibration, " is not used");
    } else if (!settings.calibration.empty()) {
      calibration_batches =
          pick_calibration_batches(program.graph->inputs(), settings.calibration, program.graph->symbol_ranges());
    }
  }
  std::vector<runtime::EngineSegment> engines;
  std::set<std::string> failed;
  {
    PhaseTimer timer("conversion and build");
    const CacheUse cache = open_cache(settings, engine_cache);
    for (const ir::Node* node : partitioned->nodes()) {
      if (!ir::is_engine_segment(*node)) continue;
      EngineBuildInfo info;
      info.segment = node->name();
      info.nodes = node->subgraph() ? node->subgraph()->num_nodes() : 0;
      try {
        KILN_CHECK(node->subgraph() != nullptr, Internal, "engine segment without a subgraph");
        engines.push_back(
            build_segment(*partitioned, *node, settings, cache, sample_inputs, calibration_batches, info));
      } catch (const Error& e) {
        Error located = e.with_context(ErrorContext{"", node->name(), "", ""});
        if (settings.pass_through_build_failures) throw located;
        KILN_WARN("engine segment '", node->name(), "' (", info.nodes,
                  " nodes) runs in PyTorch: its conversion or build failed: ", located.what());
        r.fallbacks.push_back(node->name() + ": " + located.what());
        failed.insert(node->name());
        continue;
      }
      if (info.cache_hit) {
        KILN_INFO("engine ", info.segment, ": ", info.nodes, " nodes, ", info.plan_layers, " plan layers from the cache, plan ",
                  info.plan_bytes, " bytes (load+refit ", format_ms(info.build_ms), ")");
      } else {
        KILN_INFO("engine ", info.segment, ": ", info.nodes, " nodes, ", info.network_layers, " layers -> ",
                  info.plan_layers, " after fusion, plan ", info.plan_bytes, " bytes (convert+build ",
                  format_ms(info.build_ms), ")");
      }
      r.engines.push_back(info);
    }
    if (!failed.empty()) partitioned = inline_segments(*partitioned, failed);
    r.phases.emplace_back("conversion and build", timer.elapsed_ms());
  }

  std::shared_ptr<runtime::CompiledModule> module;
  {
    PhaseTimer timer("module");
    std::shared_ptr<const ir::Graph> shared(std::move(partitioned));
    module = std::make_shared<runtime::CompiledModule>(shared, std::move(engines), settings.backend);
    std::vector<std::string> kinds;
    if (program.output_kinds.size() == module->graph().outputs().size()) {
      for (frontend::OutputKind k : program.output_kinds) {
        kinds.push_back(k == frontend::OutputKind::UserOutput ? "user_output" : "other");
      }
    }
    module->set_output_kinds(std::move(kinds));
    module->set_use_cuda_graphs(settings.use_cuda_graphs);
    module->set_static_shape_cuda_graphs(settings.static_shape_cuda_graphs);
    module->set_call_spec({program.in_spec, program.out_spec});
    module->set_compile_settings(settings::settings_to_json(settings).dump());
    r.phases.emplace_back("module", timer.elapsed_ms());
  }
  runtime::ModuleSummary summary = module->summary();
  r.engine_nodes = summary.engine_nodes;
  r.torch_nodes = summary.torch_nodes;
  KILN_INFO("compiled: ", summary.engine_segments, " engines (", summary.engine_nodes, " nodes), ",
            summary.torch_runs, " PyTorch runs (", summary.torch_nodes, " nodes)");
  return module;
}

}  // namespace kiln::compiler
