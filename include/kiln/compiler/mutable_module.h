#pragma once
// MutableModule: a program that stays compiled while its weights and shapes change (Torch-TensorRT's
// MutableTorchTensorRTModule). It holds the program, the settings, the expected input ranges and the compiled
// module, and a state:
//   UNKNOWN          nothing compiled yet (or the state could not be told): the next call compiles;
//   NEEDS_REFIT      weights changed, structure and shapes did not: the next call refits (refit_module_weights);
//   NEEDS_RECOMPILE  the structure changed, the expected ranges changed, or an input shape fell outside them: the
//                    next call compiles (the engine cache, when enabled in the settings, makes that a refit too);
//   LIVE             the compiled module matches the program: calls run it.
// It lives in the compiler layer (it compiles); engines are built refittable (immutable_weights=false) so that a
// weight update is a refit. Not thread-safe: update and execute from one thread (CompiledModule::execute itself is).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/compiler/compilation_settings.h"
#include "kiln/compiler/compile.h"
#include "kiln/frontend/program.h"
#include "kiln/runtime/compiled_module.h"
#include "kiln/support/host_tensor.h"

namespace kiln::compiler {

enum class RefitState { Unknown, NeedsRefit, NeedsRecompile, Live };
const char* refit_state_name(RefitState state);

class MutableModule {
 public:
  /// Holds `program_bytes` (a .pt2 archive) compiled with `settings` (immutable_weights is forced false) and the
  /// expected ranges `inputs` (default: the program's). Nothing is compiled until the first call or update().
  MutableModule(std::vector<uint8_t> program_bytes, CompilationSettings settings = {},
                std::vector<InputSpec> inputs = {});
  /// The same from a .pt2 file.
  static MutableModule from_file(const std::string& path, CompilationSettings settings = {},
                                 std::vector<InputSpec> inputs = {});

  RefitState state() const { return state_; }
  const CompilationSettings& settings() const { return settings_; }
  const std::vector<InputSpec>& expected_ranges() const { return inputs_; }

  /// New values for weights by state-dict name ("fc.weight"). Same dtype and shape: NEEDS_REFIT; otherwise
  /// NEEDS_RECOMPILE. Throws kiln::Error(InvalidInput) for a name the program does not have.
  void set_weights(const std::map<std::string, HostTensor>& weights);
  /// A new export of the model (a .pt2 archive's bytes): NEEDS_REFIT when only weight values differ, else
  /// NEEDS_RECOMPILE.
  void set_program(std::vector<uint8_t> program_bytes);
  /// Replaces the expected ranges of inputs (NAME=MIN:OPT:MAX specs): NEEDS_RECOMPILE.
  void set_expected_dynamic_shape_range(std::vector<InputSpec> inputs);

  /// Brings the module LIVE (compiling or refitting as the state says) and returns it.
  const runtime::CompiledModule& update();
  /// Runs the module on host tensors. An input shape outside the expected ranges widens them to include it and
  /// recompiles first (NEEDS_RECOMPILE); the program's own export ranges still bound what is possible.
  std::vector<HostTensor> execute_host(const std::vector<HostTensor>& inputs);

  /// Saves program, weights, settings, ranges and (when LIVE) the compiled module to one archive, atomically.
  void save(const std::string& path) const;
  /// Loads what save() wrote; a foreign or corrupted file is a kiln::Error.
  static MutableModule load(const std::string& path);

 private:
  void widen_ranges_for(const std::vector<HostTensor>& inputs);
  std::vector<uint8_t> program_bytes_;
  frontend::Program program_;
  std::map<std::string, HostTensor> weight_overrides_;  // set_weights since the program was set
  CompilationSettings settings_;
  std::vector<InputSpec> inputs_;
  std::shared_ptr<runtime::CompiledModule> module_;
  RefitState state_ = RefitState::Unknown;
};

}  // namespace kiln::compiler
