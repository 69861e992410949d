#pragma once
// conversion::Interpreter: turns one engine segment's ir::Graph into an engine::Network (Torch-TensorRT's
// TRTInterpreter). Tensor inputs become network inputs (-1 for dims that are not constants) with an
// optimization profile; nodes are converted in topological order by the converter the registry picks for
// each; layers are named after their source node; the graph outputs become network outputs named after the
// IR values.
//
// Shape ranges: by default each dynamic input dim's range is the interval of its SymExpr size under the
// graph's symbol ranges (graph.symbol_ranges(), the program's range constraints) and its opt value the
// expression at the export hints (graph.symbol_hints()) — carried analytically, never by running the model.
// Options override: symbol ranges/hints (e.g. derived from the user's input specs with
// symbol_ranges_from_specs), or a full min/opt/max per input name.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/settings/compilation_settings.h"
#include "kiln/conversion/registry.h"
#include "kiln/engine/network.h"
#include "kiln/engine/profile.h"
#include "kiln/ir/graph.h"

namespace kiln::conversion {

/// Options of one conversion.
struct InterpreterOptions {
  /// Per input name: min/opt/max dims that replace the derived range.
  std::map<std::string, engine::ShapeRange> input_ranges;
  /// Symbol ranges / hints that replace the graph's (per symbol).
  ir::SymRanges symbol_ranges;
  std::map<std::string, int64_t> symbol_hints;
  /// A dynamic dim whose range has no upper bound gets max = opt * this factor (at least min).
  int64_t unbounded_max_factor = 4;
};

/// The result of converting one segment.
struct InterpreterResult {
  std::unique_ptr<engine::Network> network;
  /// Ranges of the dynamic inputs (empty when every input is static).
  engine::OptimizationProfile profile;
  bool dynamic = false;
  /// Weight name -> weight, for refit.
  std::map<std::string, HostTensor> weight_refit_map;
  bool requires_output_allocator = false;
  /// ConversionContext::quantization_notes of the segment's Q/DQ nodes.
  std::vector<std::string> quantization_notes;
  /// Network input binding per graph input, in order ("" for SymInt inputs, which are not bound: their values
  /// are computed from the tensor inputs' dims).
  std::vector<std::string> input_bindings;
  /// Network output binding per graph output, in order (SymInt outputs are Int64 [1] tensors).
  std::vector<std::string> output_bindings;
};

class Interpreter {
 public:
  /// `registry` defaults to the process-wide converters() (filled with the built-in converters).
  Interpreter(const ir::Graph& graph, const settings::CompilationSettings& settings,
              InterpreterOptions options = {}, const ConverterRegistry* registry = nullptr);
  /// Converts the graph; throws kiln::Error naming the node on a missing converter or a failing one.
  InterpreterResult run();

 private:
  const ir::Graph& graph_;
  const settings::CompilationSettings& settings_;
  InterpreterOptions options_;
  const ConverterRegistry* registry_;
};

/// Symbol ranges and hints implied by user input specs: for each program input named in `specs` whose dim is a
/// bare symbol, the symbol gets [min, max] and hint opt (the intersection when a symbol appears twice).
std::pair<ir::SymRanges, std::map<std::string, int64_t>> symbol_ranges_from_specs(
    const ir::Graph& program, const std::map<std::string, engine::ShapeRange>& specs);

}  // namespace kiln::conversion
