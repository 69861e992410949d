#pragma once
// Converting a partitioned graph's engine segments into built engine Plans (what the compiler calls after
// partitioning). Each engine segment node (kiln.engine_segment.default) holds its nodes in subgraph(); it is
// converted by the Interpreter, then built by engine::Builder with a config derived from the
// CompilationSettings; the result names the bindings in the order of the segment's inputs and outputs.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/conversion/interpreter.h"
#include "kiln/engine/builder.h"
#include "kiln/engine/calibration.h"
#include "kiln/engine/plan.h"
#include "kiln/ir/graph.h"
#include "kiln/settings/compilation_settings.h"

namespace kiln::conversion {

/// One built engine segment.
struct BuiltSegment {
  /// The segment node's name ("_run_on_acc_0").
  std::string name;
  std::shared_ptr<engine::Plan> plan;
  /// Binding names per segment input / output, in order ("" for SymInt inputs: the engine derives them).
  std::vector<std::string> input_bindings;
  std::vector<std::string> output_bindings;
  /// Weight name -> weight for refit (the names are the state-dict names of the program's constants).
  std::map<std::string, HostTensor> weight_refit_map;
  bool requires_output_allocator = false;
  /// Layers of the network before building (for logs).
  int64_t network_layers = 0;
  /// The dynamic ranges set on the network's tensors (an INT8 build), and whether calibration computed them
  /// now.
  std::map<std::string, engine::DynamicRange> dynamic_ranges;
  bool calibrated = false;
  /// The ranges the program's Q/DQ (fake quantization) nodes set (explicit quantization: when there are any,
  /// calibration is not used).
  std::map<std::string, engine::DynamicRange> program_ranges;
  /// What each Q/DQ node became (InterpreterResult::quantization_notes).
  std::vector<std::string> quantization_notes;
};

/// Where an INT8 segment build's dynamic ranges come from: ranges known already (the compiler's calibration
/// cache), else calibration (engine::calibrate) of the network on `batches` (per batch, one value per segment
/// input).
struct SegmentCalibration {
  std::optional<std::map<std::string, engine::DynamicRange>> ranges;
  std::vector<std::vector<HostTensor>> batches;
  engine::CalibrationConfig config;
};

/// The engine builder's precisions for settings.enabled_precisions (FP32 always among them).
std::vector<engine::Precision> engine_precisions(const settings::CompilationSettings& settings);

/// The BuilderConfig the settings ask for: backend, precisions (enabled_precisions), strongly typed
/// (use_explicit_typing), workspace, timing cache, refittable (!immutable_weights), strip weights, timing
/// iterations, TF32 (allow_tf32), the accuracy rule's bar (reduced_precision_min_cosine), verbose (debug).
engine::BuilderConfig builder_config_from_settings(const settings::CompilationSettings& settings);

/// Makes `config` strongly typed when the network holds f16/bf16 tensors that its precisions do not allow (a
/// half-precision program keeps its own types rather than failing the build).
void adapt_config_to_network(engine::BuilderConfig& config, const engine::Network& network);

/// Converts and builds one engine segment node (ir/segment.h) holding its subgraph. Errors are rethrown with
/// the segment's name in the message. `sample_inputs` (per sample, one value per segment input) become the
/// builder's sample inputs (BuilderConfig::sample_inputs: a reduced-precision build keeps the layers that
/// overflow on them in fp32). With `calibration`, the network's tensors get dynamic ranges (from it, or
/// calibrated on its batches) before the build (BuiltSegment::dynamic_ranges says which).
BuiltSegment convert_segment(const ir::Node& segment, const settings::CompilationSettings& settings,
                             const InterpreterOptions& options = {},
                             const ConverterRegistry* registry = nullptr,
                             const std::vector<std::vector<HostTensor>>& sample_inputs = {},
                             const SegmentCalibration* calibration = nullptr);

/// Converts and builds every engine segment holding its subgraph of a partitioned graph: segment name ->
/// BuiltSegment. The options'
/// symbol ranges/hints apply to every segment (derive them from user input specs with
/// symbol_ranges_from_specs); their input_ranges apply by segment input name.
std::map<std::string, BuiltSegment> convert_engine_segments(const ir::Graph& partitioned,
                                                            const settings::CompilationSettings& settings,
                                                            const InterpreterOptions& options = {},
                                                            const ConverterRegistry* registry = nullptr);

}  // namespace kiln::conversion
