#pragma once
// runtime::CompiledModule: a partitioned graph ready to run (Torch-TensorRT's TorchTensorRTModule). Engine
// segments (partitioning/segments.h) run through engine::ExecutionContext, one built plan per segment; every other
// node runs through libtorch (TorchExecutor), grouped into runs of consecutive nodes.
//
// This header stays free of ATen includes (at::Tensor is only declared) so that the compiler layer and tests can
// include it cheaply; callers of execute() include <ATen/ATen.h> themselves.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/layer_profile.h"
#include "kiln/ir/graph.h"
#include "kiln/runtime/module_parts.h"
#include "kiln/support/host_tensor.h"

namespace at {
class Tensor;
}  // namespace at

namespace kiln::runtime {

class CompiledModule {
 public:
  /// Prepares the module: every engine segment node of `graph` must have exactly one entry in `engines` (matched by
  /// node name, with as many bindings as the segment has inputs and outputs, each naming a binding of the plan);
  /// the other nodes are resolved against libtorch. `backend` is the engine backend the plans were built for
  /// ("cpu", or "cuda": then tensors live on the GPU and the PyTorch runs execute there too, whatever device the
  /// program was exported on). Throws kiln::Error naming the node or binding on any mismatch, or when a cuda
  /// module meets a libtorch without CUDA or a machine without a GPU.
  CompiledModule(std::shared_ptr<const ir::Graph> graph, std::vector<EngineSegment> engines,
                 std::string backend = "cpu");
  ~CompiledModule();
  CompiledModule(const CompiledModule&) = delete;
  CompiledModule& operator=(const CompiledModule&) = delete;

  /// Runs the module on `inputs` (the graph's inputs in order; a SymInt input as a 0-d integer tensor) and
  /// returns the graph's outputs in order (a SymInt output as a 0-d int64 tensor). Inputs are checked first:
  /// their count, dtype, device, rank and every dim against the program's shapes and symbol ranges; a mismatch
  /// is a kiln::Error(InvalidInput) naming the input and dim. Contiguous inputs of the right dtype are handed to
  /// the engines without copies. Safe to call from several threads at once: each call takes its own execution
  /// contexts from a per-engine pool.
  std::vector<at::Tensor> execute(const std::vector<at::Tensor>& inputs) const;
  /// The same with host tensors in and out (copied to and from the module's device).
  std::vector<HostTensor> execute_host(const std::vector<HostTensor>& inputs) const;

  /// The libtorch device the module takes and returns tensors on: "cpu", or "cuda:N" for the cuda backend (the
  /// current CUDA device when the module was created). On CUDA, execute() queues the engines on libtorch's current
  /// stream and returns without waiting (as PyTorch ops do); PyTorch runs share that stream.
  std::string device() const;
  /// Waits until the work execute() queued on the current stream is done (no-op on the CPU). For timing.
  void synchronize() const;

  /// The partitioned graph the module runs.
  const ir::Graph& graph() const;
  const std::shared_ptr<const ir::Graph>& shared_graph() const;
  const std::vector<EngineSegment>& engines() const;
  const std::string& backend() const;
  ModuleSummary summary() const;
  /// The module's steps in the order they run.
  std::vector<SegmentInfo> segments() const;

  /// What each graph output is, as frontend::OutputKind names ("user_output", ...); empty when unknown. Used by
  /// the CLI to pick the user outputs; saved in the .kiln archive.
  const std::vector<std::string>& output_kinds() const;
  void set_output_kinds(std::vector<std::string> kinds);
  /// The program's call spec (saved in the .kiln archive).
  const CallSpec& call_spec() const;
  void set_call_spec(CallSpec spec);
  /// The settings the module was compiled with, as the compiler's JSON object text (compiler::CompilationSettings
  /// by field name); empty when unknown (modules made by hand, archives written before it was saved). Saved in the
  /// .kiln archive and shown by `kiln inspect`; the runtime does not interpret it.
  const std::string& compile_settings() const;
  void set_compile_settings(std::string json_text);
  /// Whether every engine runs through CUDA graphs (engine::ExecutionContext::set_cuda_graphs on every context the
  /// module creates; compiler setting use_cuda_graphs; saved in the .kiln archive). Ignored on the cpu backend.
  /// Setting it drops the pooled contexts, so call it before execute() or between calls, not during one.
  bool use_cuda_graphs() const;
  void set_use_cuda_graphs(bool enabled);
  /// Whether the engines whose input bindings all have static dims (and no data-dependent output) run through
  /// CUDA graphs also without use_cuda_graphs: recorded on the first call, replayed after (compiler setting
  /// static_shape_cuda_graphs, default true; saved in the .kiln archive). Same rules as set_use_cuda_graphs.
  bool static_shape_cuda_graphs() const;
  void set_static_shape_cuda_graphs(bool enabled);
  /// How many engines run through CUDA graphs under the two settings (0 on the cpu backend).
  size_t cuda_graph_engines() const;

  /// Turns per-layer profiling on or off: engine::ExecutionContext::set_profiling on every context of every
  /// engine (engines then run without CUDA graphs and wait for the device after each layer), and each PyTorch
  /// run timed as a whole (waiting for the device before and after it). Turning it on clears what was
  /// collected. Call it between execute() calls, not during one.
  void set_profiling(bool enabled);
  bool profiling() const;
  /// What profiling collected since it was turned on, in program order: the layers of each engine named
  /// "<segment node>/<layer>" (engine::ExecutionContext::layer_profile; the contexts of concurrent calls
  /// summed), and each PyTorch run as one record of kind "torch" named "<first node>..<last node>". Call it
  /// between execute() calls: contexts in use by a call are left out.
  std::vector<engine::LayerProfileRecord> layer_profile() const;

  /// Indices of the graph outputs that are user outputs (every output when the kinds are unknown).
  std::vector<size_t> user_output_indices() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::runtime
