#pragma once
// The PyTorch plug-in of the torch-free runtime (HostModule): what runs a module's PyTorch steps. The libtorch
// runtime (libkiln_runtime_torch.so, Kiln::runtime_torch) implements it and exports it as the C function
// kiln_torch_plugin_v1; HostModule finds it, the first time a module with PyTorch steps is loaded, in this order:
//   1. a plug-in registered in this process (register_torch_plugin),
//   2. kiln_torch_plugin_v1 already loaded in the process,
//   3. the file $KILN_TORCH_PLUGIN when set (then nothing else is tried),
//   4. libkiln_runtime_torch.so next to the library (or program) holding the torch-free runtime,
//   5. libkiln_runtime_torch.so on the dynamic loader's search path (LD_LIBRARY_PATH, the system's folders).
// No libtorch type appears here: values cross as host tensors.

#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/support/host_tensor.h"

namespace kiln::runtime {

/// The plug-in's file name and the C symbol it exports (a function returning TorchPlugin*).
inline constexpr const char* kTorchPluginFile = "libkiln_runtime_torch.so";
inline constexpr const char* kTorchPluginSymbol = "kiln_torch_plugin_v1";

/// One PyTorch step of a module, prepared.
class TorchRun {
 public:
  virtual ~TorchRun() = default;
  /// Runs the step on its inputs (the run graph's inputs in order; SymInt/SymFloat/SymBool values as 0-d int64,
  /// float64 and bool tensors) and returns its outputs the same way. Thread-safe.
  virtual std::vector<HostTensor> run(const std::vector<HostTensor>& inputs) const = 0;
};

class TorchPlugin {
 public:
  virtual ~TorchPlugin() = default;
  /// The Kiln build the plug-in was compiled in ("<version> <git revision>", as kiln_build_id()): HostModule
  /// refuses a plug-in of another build, since ir::Graph crosses between them.
  virtual std::string build() const = 0;
  /// Prepares a PyTorch run: its nodes are resolved against libtorch; `backend` is the module's ("cuda": the run
  /// executes on the GPU). Throws kiln::Error naming the node on an operator libtorch lacks.
  virtual std::unique_ptr<TorchRun> prepare(std::shared_ptr<const ir::Graph> run, const std::string& backend) const = 0;
};

/// Makes `plugin` the one HostModule uses (it must outlive every module). The libtorch runtime calls it.
void register_torch_plugin(const TorchPlugin* plugin);

/// The plug-in, found as described above. `need` says what needs it ("2 PyTorch steps (ops: aten.sin.default)")
/// for the error: Unsupported, one line saying what was looked for and what to install or set.
const TorchPlugin& torch_plugin(const std::string& need);

/// This build's identity as TorchPlugin::build() reports it.
std::string kiln_build_id();

}  // namespace kiln::runtime
