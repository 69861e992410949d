#pragma once
// engine::ExecutionContext: runs a Plan (TensorRT's IExecutionContext). Each context owns its activation
// arena and kernel states; several contexts of one plan may execute at once on different threads. The arena
// is sized for the shapes actually run (planned again for each new set of input dims, grown on demand, never
// for the profile's max up front: a range up to 2^28 must not reserve its max at creation).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/layer_profile.h"
#include "kiln/engine/plan.h"

namespace kiln::engine {

/// Provides memory for outputs whose shape is known only after execution (nonzero).
class OutputAllocator {
 public:
  virtual ~OutputAllocator() = default;
  /// Returns a buffer of at least `bytes` bytes for output `name` (called during execute()).
  virtual void* reallocate_output(const std::string& name, size_t bytes) = 0;
  /// Tells the final dims of output `name` once known.
  virtual void notify_shape(const std::string& name, const Dims& dims) = 0;
};

class ExecutionContext {
 public:
  /// A context for `plan` using optimization profile `profile`.
  explicit ExecutionContext(std::shared_ptr<const Plan> plan, int profile = 0);
  ~ExecutionContext();
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

  /// Sets the dims of input `name`; throws kiln::Error naming the input, the dim and the profile range when
  /// they lie outside the profile (or the rank / a static dim differs).
  void set_input_shape(const std::string& name, const Dims& dims);
  /// Binds a buffer for an input or output (dense C order, the binding's dtype): host memory on the cpu
  /// backend, device memory on a device backend (cuda).
  void set_tensor_address(const std::string& name, void* data);
  /// Sets the allocator of a data-dependent output.
  void set_output_allocator(const std::string& name, OutputAllocator* allocator);
  /// Dims of a binding given the current input shapes (-1 for data-dependent dims until executed).
  Dims tensor_shape(const std::string& name);
  /// Runs the plan. All inputs must have shapes and addresses; outputs addresses (or an allocator for
  /// data-dependent ones). On cpu it runs synchronously. On a device backend the work is enqueued on
  /// `stream` (a cudaStream_t on cuda; null: the default stream) and execute() returns without waiting,
  /// except for a data-dependent output (nonzero), whose count must reach the host. The context's arena
  /// is in use until the stream's work is done: do not execute the same context on two streams at once.
  void execute(void* stream = nullptr);

  /// Bytes of activation memory (the arena) the context holds now: 0 before the first execute(), then the
  /// largest plan of the input dims run so far.
  size_t arena_bytes() const;

  /// Turns CUDA-graph replay on or off for this context (off by default; Torch-TensorRT's cudagraphs mode).
  /// When on and the plan's backend can record graphs (cuda), an execute() whose input dims, bound addresses
  /// and refit generation differ from the recorded graph's runs plainly (which also creates every kernel's
  /// lazily made state) and then records the same work into a graph; an execute() that matches launches the
  /// graph on its stream instead, skipping all host-side work. One graph is kept (the last); a re-recording
  /// with unchanged input dims updates it in place when the device allows. Plans with a data-dependent output
  /// (nonzero, which waits for its stream), backends without graphs (cpu) and plans whose recording fails run
  /// plainly, with a one-time debug log. Changing the setting drops the recorded graph.
  void set_cuda_graphs(bool enabled);
  bool cuda_graphs() const;

  /// What the CUDA-graph path has done so far (for tests and logs).
  struct GraphStats {
    uint64_t captures = 0;  // recordings (new graphs and in-place updates)
    uint64_t updates = 0;   // recordings that updated the existing graph in place
    uint64_t replays = 0;   // execute() calls served by launching the recorded graph
    bool fallback = false;  // graphs were given up for this context (see set_cuda_graphs)
  };
  GraphStats graph_stats() const;

  /// Turns per-layer profiling on or off (off by default; TensorRT's IProfiler). While on, execute() times
  /// every step of the plan with a steady clock; on a device backend it waits for the stream before and after
  /// each step, so a step's time is its own work (with its launch) and execute() returns with the work done.
  /// CUDA graphs are not replayed while profiling (the context runs plainly; a recorded graph is kept for
  /// later). Off, it costs one branch per layer. Turning it on starts an empty profile; turning it off keeps
  /// the profile readable.
  void set_profiling(bool enabled);
  bool profiling() const;
  /// What profiling recorded since it was turned on, in plan order, one record per step that ran: kernel
  /// layers (the builder's reformat layers included: kind "reformat"), host layers (tactic "host") and
  /// constants copied into a plan output (tactic "copy"); a data-dependent output's copy counts to its layer.
  /// Shape inference is not counted. Empty when profiling was never on.
  std::vector<LayerProfileRecord> layer_profile() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kiln::engine
