#pragma once
// The backend interface: what a device (cpu now, cuda later) offers the builder and the execution context.
//
// Life of a kernel:
//   1. The builder asks Backend::supports(layer) for every layer (kind + dtypes + params) after fusion and
//      precision assignment; an unsupported layer is a clear build error.
//   2. Backend::tactics(layer) lists candidate kernels (e.g. "ref", "onednn"); the builder creates each
//      with create_kernel(layer, tactic), times it at the profile's opt shape and keeps the fastest; the
//      plan records the tactic *name*.
//   3. At plan load (and after a refit) the context's plan calls create_kernel(layer, tactic) again, with
//      LayerInfo::plan_data holding what the kernel's Kernel::plan_data() returned at build (stored in the
//      plan; e.g. device code compiled at build time): that is where a kernel prepares its weights (reorder
//      to blocked layouts, cast, prepack). Kernels are immutable afterwards and shared by every
//      ExecutionContext of the plan, so execute() must be thread-safe; per-context mutable data (e.g.
//      primitives cached per input shape) lives in the KernelState returned by create_state(), one per
//      context.
//   4. execute(args) reads args.inputs, writes args.outputs (buffers with concrete dims, in the memory format
//      of each TensorView: dense C order unless the tactic asked for another one, see below),
//      may use args.workspace (workspace_size() bytes, sized for the profile's max shapes) and
//      args.pool. A data-dependent kernel (nonzero) writes its actual output dims into args.outputs[i].dims;
//      its buffer is sized for the max.
//
// Memory formats: Backend::formats(layer, tactic) says which TensorFormat a tactic reads each input and
// writes each output in (all Plain by default). After choosing tactics the builder gives every tensor the
// format its producer writes, inserts Reformat layers where a consumer wants another one (and before plan
// outputs, which are always Plain), and creates each kernel with the formats of its tensors in LayerInfo
// (TensorInfo::format). create_kernel rejects formats the tactic cannot handle.
//
// Device backends (cuda): allocate() returns device memory (host_accessible() is false), so every
// TensorView, the workspace and the user's bindings are device pointers. A kernel uploads its weights to
// the device when it is created; the core uploads Constant layers' values itself (Plan::Impl). execute()
// only enqueues work on args.stream (the stream the caller passed to ExecutionContext::execute; null =
// the device's default stream) and never waits for it, except where a kernel must know data on the host
// (a data-dependent output's count), which it documents. The core moves host data (host-layer values,
// constant outputs) through copy(), ordered on the same stream.
//
// Backends are listed in one registration table (src/engine/backends/registry.cpp); a new backend adds its
// files and one line there.

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/engine/layers.h"
#include "kiln/engine/network.h"
#include "kiln/engine/thread_pool.h"
#include "kiln/support/dtype.h"

namespace kiln::engine {

/// A tensor as a kernel sees it at run time: a buffer with concrete dims in a memory format (dense C order
/// unless the kernel's tactic asked for another).
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::Float32;
  Dims dims;
  TensorFormat format = TensorFormat::Plain;

  /// Logical elements (the product of dims).
  int64_t numel() const;
  /// Bytes the buffer holds in its format (blocked formats include the padded channel tail).
  size_t nbytes() const { return static_cast<size_t>(format_bytes(format, dtype, dims)); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

/// What the builder knows about a tensor when it chooses kernels: dtype and the dims range over the
/// profile (min/opt/max are equal for static dims).
struct TensorInfo {
  std::string name;
  DType dtype = DType::Float32;
  Dims min, opt, max;
  TensorFormat format = TensorFormat::Plain;         // memory format at run time
  std::optional<DynamicRange> range = std::nullopt;  // its dynamic range, if any (INT8 tactics)
};

/// The memory formats a tactic reads (one per layer input) and writes (one per output); empty = all Plain.
struct TacticFormats {
  std::vector<TensorFormat> inputs, outputs;
};

/// A layer as a backend sees it: the (possibly fused) layer with its final weights, and its tensors.
struct LayerInfo {
  const Layer* layer = nullptr;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;

  /// The bytes a kernel of this layer stored in the plan (Kernel::plan_data(), e.g. compiled device code),
  /// when the plan was loaded or the kernel is re-created (refit); null at build. Untrusted (it comes from a
  /// file): a kernel validates it, and ignores it when it was made for another layer or tactic.
  const std::vector<uint8_t>* plan_data = nullptr;

  /// Set by the builder's tactic selection when it times candidates (BuilderConfig::timing_iterations > 0):
  /// the kernel may time alternatives of its own now (cuda "cublaslt": cuBLASLt algorithms at the opt shape)
  /// and record its choice in plan_data(); and again when the builder makes a timed kernel anew after changing
  /// what it writes (an output format: assign_formats). False when a plan is loaded or its kernels are re-created
  /// (refit).
  bool tune = false;

  /// Set from BuilderConfig::allow_reduced_precision_tactics at build: among its own alternatives the kernel
  /// may choose ones less precise than the dtype promises (cuda convolution: cuDNN's FFT and Winograd
  /// algorithms in fp32), as the builder may choose Tactic::reduced_precision tactics.
  bool reduced_precision = false;

  LayerKind kind() const { return layer->kind; }
  template <typename P>
  const P& params() const {
    return std::get<P>(layer->params);
  }
};

/// Per-context mutable kernel data (base class; kernels define their own).
class KernelState {
 public:
  virtual ~KernelState() = default;
};

/// Arguments of one kernel execution.
struct KernelArgs {
  std::vector<TensorView> inputs;
  std::vector<TensorView> outputs;
  void* workspace = nullptr;
  size_t workspace_size = 0;
  ThreadPool* pool = nullptr;  // the CPU backend's pool (null on other backends)
  KernelState* state = nullptr;
  void* stream =
      nullptr;  // the device stream to enqueue on (cudaStream_t on cuda; null: default; unused on cpu)
  /// Per input: its value on the host when the input is a shape tensor evaluated on the host (a slice's
  /// start, a reshape's shape), else null. Device kernels read shape-tensor inputs here, never from the
  /// device.
  std::vector<const HostTensor*> input_values;
};

/// A kernel for one (fused) layer, made for one tactic. Immutable after creation; see the file comment.
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Scratch bytes needed by execute() for any shape within the layer's range.
  virtual size_t workspace_size() const { return 0; }
  /// Fresh per-context state, or nullptr when the kernel needs none.
  virtual std::unique_ptr<KernelState> create_state() const { return nullptr; }
  /// Runs the layer. Throws kiln::Error on bad data (e.g. an out-of-range gather index).
  virtual void execute(KernelArgs& args) const = 0;
  /// Bytes the plan stores with this layer and hands back through LayerInfo::plan_data when it re-creates the
  /// kernel after loading (cuda "nvrtc": the compiled device code, so a loaded plan needs no compiler). Empty
  /// by default.
  virtual std::vector<uint8_t> plan_data() const { return {}; }
};

/// A candidate kernel of a backend for a layer. Names are stable: plans store them.
struct Tactic {
  std::string name;
  /// Computes with less precision than the layer's dtype promises (Winograd convolution): offered only when
  /// BuilderConfig::allow_reduced_precision_tactics is set.
  bool reduced_precision = false;
  /// Runs fp32 math in TF32 (10-bit mantissa products, fp32 accumulation: cuBLASLt FAST_TF32, cuDNN tensor-op
  /// convolution): offered only when BuilderConfig::allow_tf32 is set.
  bool tf32 = false;
  /// Computes in INT8 (quantizing with the dynamic ranges of the layer's tensors, TensorInfo::range): offered
  /// only when BuilderConfig::precisions has INT8 and the builder's INT8 policy lets the layer
  /// (int8_policy.h).
  bool int8 = false;
  /// Computes in FP8 E4M3 (quantizing with the same dynamic ranges, scale amax / 448): offered only when
  /// BuilderConfig::precisions has FP8 and the same policy lets the layer.
  bool fp8 = false;
};

/// Direction of a Backend::copy.
enum class CopyKind : uint8_t { HostToDevice, DeviceToHost, DeviceToDevice };

/// Options a backend is created with.
struct BackendOptions {
  int threads = 0;  // CPU threads; 0 = all cores
};

/// Recorded device work, replayable on any stream of the device (a CUDA graph).
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  /// Enqueues the recorded work on `stream` (null: the default stream) and returns without waiting.
  virtual void launch(void* stream) = 0;
};

/// Records device work for replay: what a backend that has graphs (cuda) returns from
/// Backend::graph_recorder(). ExecutionContext replays one recording per execute() (use_cuda_graphs), and the
/// builder times a tactic's recorded runs.
class GraphRecorder {
 public:
  virtual ~GraphRecorder() = default;
  /// Calls `record(stream)` with a private stream in capture mode, so that what it enqueues there is
  /// recorded, not run. Nothing of it may allocate device memory or wait for the device. When `graph` already
  /// holds a recording of the same sequence of operations, it is updated in place (returns true); otherwise
  /// it is replaced by a new one (returns false). Throws kiln::Error when the work cannot be recorded (an
  /// exception from `record`, a synchronization or allocation inside it, an instantiation failure); the
  /// device is usable afterwards and `graph` is left null.
  virtual bool record(const std::function<void(void* stream)>& record,
                      std::unique_ptr<DeviceGraph>& graph) const = 0;
};

/// Timestamps on a device's streams, for per-layer profiles in device time: what a backend that runs work
/// asynchronously (cuda) returns from Backend::device_clock(). One per profiling context (it holds events).
class DeviceClock {
 public:
  virtual ~DeviceClock() = default;
  /// Holds `stream`: work enqueued on it afterwards waits until release() (or a timeout of about 100 ms), so
  /// that what the host enqueues meanwhile runs back to back at the device's pace, not the host's.
  virtual void hold(void* stream) = 0;
  virtual void release() noexcept = 0;
  /// Enqueues a timestamp on `stream`; returns its index in this round (from 0).
  virtual size_t mark(void* stream) = 0;
  /// Milliseconds between marks `a` and `b` of this round, once the stream has been synchronized.
  virtual double elapsed_ms(size_t a, size_t b) const = 0;
  /// Starts a new round: marks are numbered from 0 again.
  virtual void reset() = 0;
};

/// A device backend. Implementations are stateless apart from their options and thread pool.
class Backend {
 public:
  virtual ~Backend() = default;
  /// "cpu", "cuda".
  virtual std::string name() const = 0;
  /// Identity of the device for timing caches and plan compatibility, e.g. "cpu x86_64 avx512f 2t".
  virtual std::string device() const = 0;
  /// Whether the backend can run `layer` with its dtypes and params; when not, `why` says why.
  virtual bool supports(const LayerInfo& layer, std::string* why) const = 0;
  /// Whether the backend runs this floating dtype at all (fp32, fp16, bf16) for layers of `kind`.
  virtual bool supports_precision(LayerKind kind, DType dtype) const = 0;
  /// Whether this backend's optimized kernels run `layer` (a Convolution or MatrixMultiply whose post_ops the
  /// builder's fusion pass is extending) with all of its post-ops fused. When not, the pass keeps the
  /// activation or residual add a layer of its own, rather than leaving the fused layer to a reference
  /// kernel.
  virtual bool fuses_post_ops(const Layer& layer) const {
    (void)layer;
    return true;
  }
  /// Whether the kernels of `layer` (a convolution or matrix multiply with its post-ops as set) would apply
  /// some post-op in a pass of their own over the output after the library call, rather than inside it. The
  /// builder then leaves an activation that a following pointwise layer can take to that layer's fused
  /// program (one pass for both) instead of adding a pass here.
  virtual bool post_ops_need_a_pass(const Layer& layer) const {
    (void)layer;
    return false;
  }
  /// Candidate kernels for `layer`, best guess first (never empty when supports() is true).
  virtual std::vector<Tactic> tactics(const LayerInfo& layer) const = 0;
  /// Why none of the backend's kernels other than `reference` runs `layer` ("<tactic>: <why>; ..."), for the
  /// build log of a layer left to its reference kernel; empty when the backend cannot say.
  virtual std::string refusals(const LayerInfo& layer, const std::string& reference) const {
    (void)layer;
    (void)reference;
    return {};
  }
  /// The formats tactic `tactic` prefers for `layer` (whose tensors are all Plain when asked); see the file
  /// comment. The default: all Plain.
  virtual TacticFormats formats(const LayerInfo& layer, const std::string& tactic) const { return {}; }
  /// Whether tactic `tactic` can also write `layer`'s output 0 in `format` (beside what formats() says), so
  /// that the builder has it write the format its one consumer reads instead of inserting a Reformat after
  /// it (e.g. a matmul that quantizes its fp16 result to E4M3 in the pass it runs anyway, for the FP8 layer
  /// after it): the workspace bytes its kernel then needs, or nothing when it cannot (or would gain nothing
  /// over a Reformat). `layer` is as formats() is asked. The default: never.
  virtual std::optional<size_t> writes_format(const LayerInfo& layer, const std::string& tactic,
                                              TensorFormat format) const {
    (void)layer;
    (void)tactic;
    (void)format;
    return std::nullopt;
  }
  /// Whether the kernel of (layer, tactic) can also write a copy of its output 0 in `format` in the same pass,
  /// with no workspace (a layer norm whose fp16 output is the residual stream writing the E4M3 input of the FP8
  /// matmul after it): the builder then gives the layer that copy as an extra output (Layer::format_copies)
  /// instead of a Reformat. `layer` is as formats() is asked. The default: never.
  virtual bool writes_copy(const LayerInfo& layer, const std::string& tactic, TensorFormat format) const {
    (void)layer;
    (void)tactic;
    (void)format;
    return false;
  }
  /// Whether INT8 tensors with a never-negative range may be stored u8 (the builder's INT8 between layers,
  /// int8_policy.h), with the step amax / 255: the cpu backend's oneDNN kernels read u8. False: every INT8
  /// tensor is s8 with the step amax / 127 (DynamicRange::symmetric_scale; cuda: cuDNN's INT8 convolutions).
  virtual bool int8_unsigned() const { return true; }
  /// Makes the kernel for (layer, tactic) with the formats in `layer`; throws kiln::Error when the tactic is
  /// unknown, does not apply or cannot handle those formats (its output 0 may be in a format writes_format()
  /// accepts, its format copies in formats writes_copy() accepts).
  virtual std::unique_ptr<Kernel> create_kernel(const LayerInfo& layer, const std::string& tactic) const = 0;
  /// The thread pool kernels get in KernelArgs::pool (null if the backend has none).
  virtual ThreadPool* thread_pool() const = 0;
  /// Memory the kernels can address (host memory on cpu); aligned to 64 bytes.
  virtual void* allocate(size_t bytes) const = 0;
  virtual void deallocate(void* pointer) const = 0;
  /// Whether allocate() returns memory the host reads and writes directly (cpu). When false, bindings are
  /// device pointers and the core moves host data with copy().
  virtual bool host_accessible() const { return true; }
  /// Copies `bytes` bytes in order on `stream` (asynchronously on a device). A host source may be released
  /// or changed as soon as copy() returns.
  virtual void copy(void* dst, const void* src, size_t bytes, CopyKind kind, void* stream) const {
    (void)kind;
    (void)stream;
    if (bytes) std::memcpy(dst, src, bytes);
  }
  /// Waits until the work enqueued on `stream` is done (nothing to wait for on cpu).
  virtual void synchronize(void* stream) const { (void)stream; }
  /// Throws kiln::Error when a plan built for device `plan_device` cannot run on this backend's device
  /// (cuda: another compute capability). The cpu backend accepts any (plans are portable there).
  virtual void check_plan_device(const std::string& plan_device) const { (void)plan_device; }
  // Optional capabilities: each accessor returns null where the backend lacks it (the default).

  /// Records device work for replay (cuda: CUDA graphs); null on backends that run work as it is issued
  /// (cpu).
  virtual const GraphRecorder* graph_recorder() const { return nullptr; }
  /// A new clock for per-layer profiles in device time (cuda); null where layers run as the host issues them
  /// (cpu: the host's clock is the device's).
  virtual std::unique_ptr<DeviceClock> device_clock() const { return nullptr; }
};

/// A library a backend runs on, as `kiln --version` prints it: {"oneDNN", "2.6.3"}, {"cuDNN", "9.1.0"}.
struct LibraryVersion {
  std::string name;
  std::string version;
};

/// One row of the backend registration table.
struct BackendEntry {
  const char* name;
  std::unique_ptr<Backend> (*create)(const BackendOptions& options);
  /// Whether this build has the backend's code (cuda: only where nvcc was found at configure time).
  bool built;
  /// The libraries the backend runs on, the versions loaded in this process (and built against, where they
  /// differ); empty when not built.
  std::vector<LibraryVersion> (*libraries)();
  /// Whether the backend's INT8 tactics compute a Q/DQ program's integers exactly on this machine (cpu: they
  /// need VNNI), so that its quantize/dequantize pairs fold into them; when not, `why` says why. Null: the
  /// backend folds no Q/DQ pairs (cuda: its INT8 convolutions are for calibrated builds; they read s8 only and
  /// there are no INT8 matmuls).
  bool (*int8_exact)(std::string* why) = nullptr;
};

/// The registered backends (one table, src/engine/backends/registry.cpp).
const std::vector<BackendEntry>& backend_registry();
/// Whether backend `name` runs a Q/DQ program's INT8 layers exactly on this machine (BackendEntry::int8_exact);
/// `why` says why not (it folds no Q/DQ pairs, an unknown backend, or what the machine lacks).
bool backend_runs_int8(const std::string& name, std::string* why);
/// Creates the backend named `name`; throws kiln::Error(Unsupported) listing the known ones otherwise.
std::unique_ptr<Backend> create_backend(const std::string& name, const BackendOptions& options = {});

}  // namespace kiln::engine
