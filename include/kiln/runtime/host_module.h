#pragma once
// runtime::HostModule: a compiled module (.kiln) loaded and run without libtorch, with Kiln's host tensors in and
// out: the torch-free runtime (library kiln_runtime_core, CMake target Kiln::runtime). Engine steps run through
// engine::ExecutionContext; a module that also has PyTorch steps runs them through the PyTorch plug-in
// (torch_plugin.h), which the first such load finds and loads (libkiln_runtime_torch.so), or fails with one line
// saying how many PyTorch steps and which operators need it and what to install or set.
//
// Nothing here includes or links libtorch. The libtorch runtime with at::Tensor in and out is CompiledModule
// (compiled_module.h, Kiln::runtime_torch).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/layer_profile.h"
#include "kiln/ir/graph.h"
#include "kiln/runtime/module_parts.h"
#include "kiln/support/host_tensor.h"

namespace kiln::runtime {

class HostModule {
 public:
  /// Loads a .kiln archive (the format of module_archive_format.h, every field checked). Throws kiln::Error naming
  /// the file on anything malformed, and Unsupported when the module has PyTorch steps and the plug-in cannot be
  /// loaded.
  static std::shared_ptr<HostModule> load(const std::string& path);
  /// The same from bytes; `label` names them in errors.
  static std::shared_ptr<HostModule> load_from_bytes(std::vector<uint8_t> bytes,
                                                     const std::string& label = "<memory>");

  /// Prepares a module from its parts (as load() does): engines and bindings are checked against the graph as
  /// CompiledModule's constructor checks them. `backend` is the engines' backend ("cpu" or "cuda").
  HostModule(std::shared_ptr<const ir::Graph> graph, std::vector<EngineSegment> engines, std::string backend);
  ~HostModule();
  HostModule(const HostModule&) = delete;
  HostModule& operator=(const HostModule&) = delete;

  /// Runs the module on `inputs` (the graph's inputs in order; a SymInt input as a one-element integer tensor)
  /// and returns the graph's outputs in order (a SymInt output as a 0-d int64 tensor), in host memory. Inputs are
  /// checked first as CompiledModule::execute checks them (count, dtype, rank, every dim against the program's
  /// shapes and symbol ranges): a mismatch is a kiln::Error(InvalidInput) naming the input and dim. On the cpu
  /// backend engines read the inputs in place; on cuda, inputs are copied to the GPU and outputs back, and the call
  /// returns when they are on the host. Safe to call from several threads at once.
  std::vector<HostTensor> execute(const std::vector<HostTensor>& inputs) const;

  const ir::Graph& graph() const;
  const std::vector<EngineSegment>& engines() const;
  const std::string& backend() const;
  ModuleSummary summary() const;
  /// The module's steps in the order they run.
  std::vector<SegmentInfo> segments() const;
  /// What each graph output is ("user_output" or "other"; empty when unknown) and the user outputs' indices.
  const std::vector<std::string>& output_kinds() const;
  void set_output_kinds(std::vector<std::string> kinds);
  std::vector<size_t> user_output_indices() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::runtime
