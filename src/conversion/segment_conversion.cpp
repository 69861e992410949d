#include "kiln/conversion/segment_conversion.h"

#include <algorithm>

#include "kiln/engine/thread_pool.h"
#include "kiln/ir/segment.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::conversion {

std::vector<engine::Precision> engine_precisions(const settings::CompilationSettings& settings) {
  std::vector<engine::Precision> out = {engine::Precision::FP32};
  const auto& enabled = settings.enabled_precisions;
  if (enabled.count(settings::Precision::F16)) out.push_back(engine::Precision::FP16);
  if (enabled.count(settings::Precision::BF16)) out.push_back(engine::Precision::BF16);
  if (enabled.count(settings::Precision::I8)) out.push_back(engine::Precision::INT8);
  if (enabled.count(settings::Precision::F8)) out.push_back(engine::Precision::FP8);
  return out;
}

engine::BuilderConfig builder_config_from_settings(const settings::CompilationSettings& settings) {
  engine::BuilderConfig c;
  c.backend = settings.backend;
  c.precisions = engine_precisions(settings);
  c.strongly_typed = settings.use_explicit_typing;
  if (settings.workspace_size > 0) c.workspace_limit = static_cast<size_t>(settings.workspace_size);
  c.timing_cache_path = settings.timing_cache_path;
  c.refittable = !settings.immutable_weights;
  c.strip_weights = settings.strip_engine_weights;
  c.timing_iterations = std::max(1, settings.num_avg_timing_iters);
  KILN_CHECK(settings.threads >= 0 && settings.threads <= engine::kMaxThreads, InvalidInput, "threads: ",
             settings.threads, " is not in [0, ", engine::kMaxThreads, "]");
  c.threads = settings.threads;
  c.allow_tf32 = settings.allow_tf32;
  c.graphs_for_static = settings.use_cuda_graphs || settings.static_shape_cuda_graphs;
  c.graphs_for_dynamic = settings.use_cuda_graphs;
  c.min_output_cosine = settings.reduced_precision_min_cosine;
  c.int8_first_last = settings.quantize_first_last;
  c.verbose = settings.debug;
  return c;
}

void adapt_config_to_network(engine::BuilderConfig& config, const engine::Network& network) {
  for (int64_t i = 0; i < network.num_tensors(); ++i) {
    const DType d = network.tensor(i)->dtype();
    if ((d == DType::Float16 && !config.allows(engine::Precision::FP16)) ||
        (d == DType::BFloat16 && !config.allows(engine::Precision::BF16))) {
      config.strongly_typed = true;
      return;
    }
  }
}

namespace {

// An engine segment that holds the nodes to convert.
bool convertible_segment(const ir::Node& node) {
  return ir::is_engine_segment(node) && node.subgraph() != nullptr;
}

}  // namespace

BuiltSegment convert_segment(const ir::Node& segment, const settings::CompilationSettings& settings,
                             const InterpreterOptions& options, const ConverterRegistry* registry,
                             const std::vector<std::vector<HostTensor>>& sample_inputs,
                             const SegmentCalibration* calibration) {
  KILN_CHECK(convertible_segment(segment), InvalidInput, "node '", segment.name(),
             "' is not an engine segment");
  BuiltSegment out;
  out.name = segment.name();
  try {
    settings::CompilationSettings s = settings;
    if (std::string backend = ir::segment_backend(segment); !backend.empty()) s.backend = backend;
    InterpreterResult r = Interpreter(*segment.subgraph(), s, options, registry).run();
    engine::BuilderConfig config = builder_config_from_settings(s);
    if (r.dynamic) config.profiles.push_back(r.profile);
    adapt_config_to_network(config, *r.network);
    auto named = [&](const std::vector<HostTensor>& values, const char* what) {
      KILN_CHECK(values.size() == r.input_bindings.size(), InvalidInput, what, ": ", values.size(),
                 " values for ", r.input_bindings.size(), " segment inputs");
      std::map<std::string, HostTensor> out;
      for (size_t k = 0; k < values.size(); ++k) {
        if (!r.input_bindings[k].empty()) out[r.input_bindings[k]] = values[k];
      }
      return out;
    };
    for (const std::vector<HostTensor>& sample : sample_inputs)
      config.sample_inputs.push_back(named(sample, "sample inputs"));
    // Ranges the program's Q/DQ nodes gave (the fake-quantize converter): explicit quantization. The program
    // chose which layers are quantized (the first and last too, in INT8 whether or not it times faster), and
    // calibration data is not used (docs/quantization.md, precision rules).
    for (int64_t i = 0; i < r.network->num_tensors(); ++i) {
      const engine::Tensor* t = r.network->tensor(i);
      if (t->dynamic_range()) out.program_ranges[t->name()] = *t->dynamic_range();
    }
    if (!out.program_ranges.empty()) {
      config.int8_first_last = true;
      config.int8_explicit = true;
      if (calibration != nullptr) {
        KILN_WARN("engine segment '", segment.name(),
                  "': its ranges come from the program's quantize/dequantize nodes; the calibration data is "
                  "not used");
        calibration = nullptr;
      }
    }
    if (calibration != nullptr) {
      if (calibration->ranges) {
        out.dynamic_ranges = *calibration->ranges;
      } else {
        std::vector<std::map<std::string, HostTensor>> batches;
        for (const std::vector<HostTensor>& batch : calibration->batches)
          batches.push_back(named(batch, "calibration"));
        out.dynamic_ranges = engine::calibrate(*r.network, config, batches, calibration->config);
        out.calibrated = true;
      }
      engine::set_dynamic_ranges(*r.network, out.dynamic_ranges);
    }
    out.quantization_notes = std::move(r.quantization_notes);
    out.network_layers = static_cast<int64_t>(r.network->layers().size());
    out.plan = engine::Builder(config).build(*r.network);
    out.input_bindings = std::move(r.input_bindings);
    out.output_bindings = std::move(r.output_bindings);
    out.weight_refit_map = std::move(r.weight_refit_map);
    out.requires_output_allocator = r.requires_output_allocator;
  } catch (const Error& e) {
    throw Error(e.kind(), "engine segment '" + segment.name() + "': " + e.message(), e.context());
  }
  KILN_INFO("conversion: segment ", out.name, ": ", out.network_layers, " network layers, ", out.plan->layers().size(),
            " plan layers");
  return out;
}

std::map<std::string, BuiltSegment> convert_engine_segments(const ir::Graph& partitioned,
                                                            const settings::CompilationSettings& settings,
                                                            const InterpreterOptions& options,
                                                            const ConverterRegistry* registry) {
  std::map<std::string, BuiltSegment> out;
  for (const ir::Node* n : partitioned.nodes()) {
    if (!convertible_segment(*n)) continue;
    out.emplace(n->name(), convert_segment(*n, settings, options, registry));
  }
  return out;
}

}  // namespace kiln::conversion
