#pragma once
// compiler::compile: the whole pipeline (Torch-TensorRT's torch_tensorrt.dynamo.compile): lowering ->
// partitioning -> conversion of each engine segment -> engine build -> runtime::CompiledModule.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/compiler/compilation_settings.h"
#include "kiln/compiler/engine_cache.h"
#include "kiln/engine/precision_policy.h"
#include "kiln/engine/tactic_stats.h"
#include "kiln/frontend/program.h"
#include "kiln/runtime/compiled_module.h"

namespace kiln::compiler {

/// The shape range a user asks for on one program input (Torch-TensorRT's Input(min_shape, opt_shape,
/// max_shape)). Dims that are static in the program must equal it in all three shapes.
struct InputSpec {
  std::string name;
  std::vector<int64_t> min, opt, max;
};

/// Parses "NAME=MIN:OPT:MAX" with shapes written "1x3x224x224" (or "NAME=SHAPE" for one fixed shape; "NAME=" with
/// an empty shape is a 0-d input). Throws kiln::Error(InvalidInput) quoting the text.
InputSpec parse_input_spec(const std::string& text);

/// What compile() did, for logs, `kiln compile --verbose` and tests.
struct EngineBuildInfo {
  std::string segment;         // the engine segment node's name
  size_t nodes = 0;            // IR nodes in the segment
  size_t network_layers = 0;   // layers the converters produced
  size_t plan_layers = 0;      // layers left after the builder's folding and fusions
  size_t plan_bytes = 0;       // serialized plan size
  double build_ms = 0.0;       // conversion and engine build (or cache load and refit)
  bool cache_hit = false;      // taken from the engine cache and refitted
  engine::TacticStats tactics;  // how the build chose tactics (zero for an engine-cache hit)
  /// Layers a reduced-precision build kept in fp32 and constants it clamped, with the rule (empty for an fp32
  /// build; an engine-cache hit: as its build said).
  std::vector<engine::PrecisionNote> precision;
  /// An INT8 build: "calibrated" (calibration ran), "calibration cache" (its ranges were reused), "program
  /// Q/DQ" (every range came from the program's quantize/dequantize nodes; also on an engine-cache hit of such a
  /// build), else empty.
  std::string calibration;
  /// What each quantize/dequantize (fake quantization) node of the segment became: folded into a tensor's
  /// dynamic range, or run as fake-quant arithmetic with the reason (an engine-cache hit: as its build said).
  std::vector<std::string> quantization;
  /// The precision each convolution and matrix-multiply layer of the plan computes in ("int8", "f32", "f16",
  /// "bf16"), in plan order: (layer name, precision, tactic).
  struct LayerPrecision {
    std::string layer, precision, tactic;
  };
  std::vector<LayerPrecision> layers;
};

struct CompileReport {
  /// (phase, milliseconds) in order: lowering, partitioning, conversion+build, module.
  std::vector<std::pair<std::string, double>> phases;
  std::vector<EngineBuildInfo> engines;
  /// Engine segments given back to PyTorch: "segment: reason".
  std::vector<std::string> fallbacks;
  /// Nodes that run in engines / in PyTorch in the final module.
  size_t engine_nodes = 0;
  size_t torch_nodes = 0;

  /// A few lines of text: the phases with their times, then one line per engine.
  std::string to_string() const;
};

/// Runs the lowering passes on `graph` as compile() does: decompositions apply only to ops that no converter
/// takes under `settings`; the graph is verified after each pass when settings.debug is set.
void lower(ir::Graph& graph, const CompilationSettings& settings);

/// Compiles `program` (left unchanged) with `settings`. `inputs` narrows the shape ranges of dynamic inputs
/// (default: the program's range constraints and export hints). Each phase is logged at Info with its time,
/// each engine with its layers, fusions and plan bytes. An engine segment whose conversion or build fails
/// runs in PyTorch instead, with a warning, unless settings.pass_through_build_failures (then the error
/// propagates). settings.dryrun stops after partitioning and returns nullptr (the report still says what
/// would run where). With settings.cache_built_engines / reuse_cached_engines (which need
/// immutable_weights=false), engines are looked up in `engine_cache` (default: a DiskEngineCache at
/// settings.engine_cache_dir) by their segment hash (engine_hash.h): a hit is a weightless plan refitted with
/// this program's weights ("cache hit" in the log); a miss is built (refittable) and saved. `sample_inputs`
/// (per sample, one value per program input, in order): an fp16/bf16 build of an engine segment whose inputs
/// are all program inputs runs them and keeps the layers whose output overflows on them in fp32
/// (BuilderConfig::sample_inputs; the report's precision notes say which); such a segment is built, not taken
/// from the engine cache.
std::shared_ptr<runtime::CompiledModule> compile(
    const frontend::Program& program, const CompilationSettings& settings,
    const std::vector<InputSpec>& inputs = {}, CompileReport* report = nullptr,
    EngineCache* engine_cache = nullptr, const std::vector<std::vector<HostTensor>>& sample_inputs = {});

/// The engine builder's precisions for settings.enabled_precisions (FP32 always included).
std::vector<std::string> precision_names(const CompilationSettings& settings);

}  // namespace kiln::compiler
