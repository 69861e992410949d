#pragma once
// ConversionContext: what every converter receives first (Torch-TensorRT's ConversionContext): the network
// being built, the compilation settings, the weight refit map and the CPU weights kept alive for the build.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/settings/compilation_settings.h"
#include "kiln/engine/network.h"
#include "kiln/ir/sym_expr.h"
#include "kiln/support/host_tensor.h"

namespace kiln::conversion {

class ConversionContext {
 public:
  ConversionContext(engine::Network& network, const settings::CompilationSettings& settings)
      : net(network), compilation_settings(settings) {}

  /// The network under construction.
  engine::Network& net;
  /// The active settings (precisions, backend, ...).
  const settings::CompilationSettings& compilation_settings;
  /// Set when any converter of the segment needs an output allocator (data-dependent output shapes).
  bool requires_output_allocator = false;
  /// Weight name in the engine -> the weight, for refitting without a rebuild.
  std::map<std::string, HostTensor> weight_refit_map;
  /// What the converters did with each fake quantization (Q/DQ) node: "node: folded into the range [..] of t"
  /// or "node: fake-quant arithmetic (reason)", for the compile report.
  std::vector<std::string> quantization_notes;
  /// Weight name -> the INT8 scales a Q/DQ program stored it with (node metadata, ir/int8_weight_scales.h;
  /// filled by the interpreter); the weights made under that name carry them (engine::Weights::int8_scales).
  std::map<std::string, std::vector<float>> int8_weight_scales;
  /// Host weights referenced by the network, held until the engine is built.
  std::vector<HostTensor> cpu_weights_reference_holder;

  /// Engine weights named `name` (refit name; empty: unnamed) holding `value`, with their INT8 scales if any.
  engine::Weights weights(const std::string& name, const HostTensor& value) const;
  /// Records a constant added to the network under `name` so it can be refit later; also holds it.
  void record_weight(const std::string& name, const HostTensor& weight);
  /// Releases the held host weights (called after the build).
  void clear_cpu_weights_reference_holder() { cpu_weights_reference_holder.clear(); }

  /// Where each shape symbol can be read at run time: a network input and one of its dims. Filled by the
  /// interpreter from the segment inputs whose dims are bare symbols; used by shape arithmetic.
  struct SymbolSource {
    engine::Tensor* tensor = nullptr;
    int64_t dim = 0;
  };
  std::map<std::string, SymbolSource> symbol_sources;
  /// Cache of symbol -> 1-element Int64 shape tensor (built on first use).
  std::map<std::string, engine::Tensor*> symbol_tensors;

  /// The name of the node being converted (layers are named after it); set by the interpreter.
  std::string current_node;
  /// A fresh layer name "<current node>" or "<current node>/<suffix>_<k>" (unique within the network).
  std::string name(const std::string& suffix = "");

 private:
  std::map<std::string, int64_t> name_counts_;
};

}  // namespace kiln::conversion
