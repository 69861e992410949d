#include "kiln/engine/execution_context.h"

#include <cstring>
#include <map>

#include "engine/core/layer_timer.h"
#include "engine/core/plan_impl.h"
#include "engine/core/shape_walk.h"
#include "engine/core/zero_volume.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::engine {
namespace {

int64_t bytes_of(const Dims& d, DType dt) {
  int64_t n = 1;
  for (int64_t x : d) n *= std::max<int64_t>(x, 0);
  return n * static_cast<int64_t>(dtype_size(dt));
}

/// Owns one block of backend memory.
struct Block {
  const Backend* backend = nullptr;
  void* data = nullptr;
  Block() = default;
  Block(const Backend* b, size_t bytes) : backend(b), data(b->allocate(bytes)) {}
  Block(const Block&) = delete;
  Block& operator=(Block&& o) noexcept {
    std::swap(backend, o.backend);
    std::swap(data, o.data);
    return *this;
  }
  ~Block() {
    if (data) backend->deallocate(data);
  }
};

}  // namespace

struct ExecutionContext::State {
  std::shared_ptr<const Plan> plan;
  const Plan::Impl* g = nullptr;
  int profile = 0;
  std::vector<std::optional<Dims>> input_dims;
  std::map<std::string, void*> addresses;
  std::map<std::string, OutputAllocator*> allocators;
  Block arena, workspace;
  // The activation memory plan for the input dims of the current run (offsets, capacity): made for the shapes
  // actually run, not the profile's max, so a wide range (a symbol up to 2^28) costs nothing up front. The
  // arena grows when a run needs more (never shrinks), and is only allocated at the first execute.
  PlanProfile memory;
  std::vector<Dims> memory_inputs;  // the input dims `memory` was planned for
  bool memory_planned = false;
  uint64_t arena_size = 0;
  std::vector<std::unique_ptr<KernelState>> states;
  std::vector<const Kernel*> state_owner;  // the kernel each state was made by
  uint64_t states_generation = 0;          // the plan's refit generation the states were made at
  std::vector<Dims> dims;
  std::vector<std::optional<HostTensor>> values;
  // Shape cache: dims/values above were inferred by a complete execute() for these input dims. Host layers
  // depend only on input shapes, so a repeated execute with the same dims reuses them (skipping shape
  // inference and host evaluation). Plans with data-dependent dims (nonzero) never reuse.
  bool cacheable = true;
  bool shapes_cached = false;
  std::vector<Dims> cached_inputs;
  uint64_t cached_generation = 0;         // the plan's refit generation the cache was made at
  void* stream = nullptr;                 // the stream of the current execute() (device backends)
  std::unique_ptr<LayerTimer> timer;      // set while profiling (set_profiling)
  std::vector<LayerProfileRecord> timed;  // what the timer recorded, once profiling was turned off
  // CUDA graphs (set_cuda_graphs): the last recording and what it was recorded for. Declared last, so the
  // graph is destroyed before the arena and workspace it refers to are freed.
  bool graphs = false;
  ExecutionContext::GraphStats stats;
  std::vector<Dims> graph_inputs;
  std::map<std::string, void*> graph_addresses;
  uint64_t graph_generation = 0;
  std::unique_ptr<DeviceGraph> graph;

  void* address(int64_t id) {
    const PlanTensor& t = g->tensors[id];
    if (t.is_input) return user(t.name);
    if (t.producer >= 0 && g->layers[t.producer].layer.kind == LayerKind::Constant) {
      // Device backends read the plan's device copy of the constant (Plan::Impl::upload_constants).
      if (!g->backend->host_accessible()) return g->device_constants[t.producer].data;
      return const_cast<uint8_t*>(g->layers[t.producer].layer.weights[0].value.data());
    }
    int64_t off = memory.offsets[id];
    if (off >= 0) return static_cast<uint8_t*>(arena.data) + off;
    if (t.is_output) return user(t.name);
    return nullptr;  // zero-byte tensor
  }

  void* user(const std::string& name) {
    auto it = addresses.find(name);
    KILN_CHECK(it != addresses.end() && it->second != nullptr, InvalidInput, "no buffer bound for '", name,
               "' (call set_tensor_address)");
    return it->second;
  }

  void check_capacity(int64_t id) {
    int64_t off = memory.offsets[id];
    if (off < 0) return;
    int64_t need = format_bytes(g->tensors[id].format, g->tensors[id].dtype, dims[id]);
    KILN_CHECK(need <= memory.capacity[id], InvalidInput, "tensor '", g->tensors[id].name, "' with dims ",
               dims_str(dims[id]), " needs ", need,
               " bytes but the memory plan for these input shapes reserved ", memory.capacity[id],
               " (a data-dependent size exceeded its bound)");
  }

  /// Plans activation memory for the current input dims (once per distinct dims) and grows the arena to it.
  void plan_arena() {
    std::vector<Dims> in;
    for (const auto& d : input_dims) in.push_back(*d);
    if (memory_planned && in == memory_inputs) return;
    const PlanProfile& prof = g->profiles[profile];
    PlanProfile m;
    // Data-dependent sizes (nonzero) at their bound; what stays unknown keeps the profile's max.
    ConcreteShapes shapes = infer_concrete(*g, in, DataDependentGuess::Max);
    m.max = std::move(shapes.dims);
    for (size_t id = 0; id < m.max.size(); ++id) {
      const Dims& d = m.max[id];
      if (d.size() != prof.max[id].size() ||
          std::any_of(d.begin(), d.end(), [](int64_t x) { return x < 0; })) {
        m.max[id] = prof.max[id];
      }
    }
    plan_memory(*g, m);
    if (m.arena_bytes > arena_size) {
      arena = Block();  // free the smaller arena before allocating the larger one
      arena_size = 0;
      arena = Block(g->backend.get(), m.arena_bytes);
      arena_size = m.arena_bytes;
    }
    memory = std::move(m);
    memory_inputs = std::move(in);
    memory_planned = true;
  }

  /// Infers shapes (and evaluates host layers); with `execute`, also runs the kernels.
  void run(bool execute);
  /// The part of run() after layer `li`'s shape inference, which gave `outs` for inputs `in`: the layer's
  /// host value, and with `execute` its kernel or copy. Marks data-dependent outputs known once the kernel
  /// has run.
  void run_layer(size_t li, const std::vector<ShapeIn>& in, const std::vector<ShapeOut>& outs, bool execute,
                 std::vector<bool>& unknown);
  /// execute() with the dims and host values of the previous execute (same input dims).
  void run_cached();
  /// Layer `li`'s part of run_cached().
  void rerun_layer(size_t li);
  /// Runs the kernel of layer `li` with the current dims; returns its arguments (for data-dependent outputs).
  KernelArgs run_kernel(size_t li);
  /// Copies the value of Constant layer `li` into the output binding it is (from the plan's device copy on a
  /// device backend, so that no pageable host memory is read while a graph is recorded).
  void copy_constant_output(size_t li);
  /// execute() with CUDA graphs on: replays the recorded graph when it matches, else runs and records.
  void execute_graph();
  /// Turns graphs off for this context (plain execution from now on), logging why once.
  void give_up_graphs(const std::string& why);
};

ExecutionContext::ExecutionContext(std::shared_ptr<const Plan> plan, int profile)
    : state_(std::make_unique<State>()) {
  KILN_CHECK(plan != nullptr, InvalidInput, "ExecutionContext needs a plan");
  plan->profile(profile);
  State& s = *state_;
  s.plan = std::move(plan);
  s.g = &s.plan->impl();
  s.profile = profile;
  s.input_dims.resize(s.g->inputs.size());
  for (size_t i = 0; i < s.g->inputs.size(); ++i) {
    const Dims& d = s.g->tensors[s.g->inputs[i]].dims;
    if (std::all_of(d.begin(), d.end(), [](int64_t x) { return x >= 0; })) s.input_dims[i] = d;
  }
  s.memory = s.g->profiles[profile];  // the max-shape plan until the first execute plans for its shapes
  s.workspace = Block(s.g->backend.get(), s.g->workspace_bytes);
  s.states.resize(s.g->layers.size());
  s.state_owner.assign(s.g->layers.size(), nullptr);
  for (const auto& pl : s.g->layers) s.cacheable = s.cacheable && pl.layer.kind != LayerKind::NonZero;
}

ExecutionContext::~ExecutionContext() = default;

void ExecutionContext::set_cuda_graphs(bool enabled) {
  State& s = *state_;
  s.graphs = enabled;
  s.stats.fallback = false;
  s.graph.reset();
}

bool ExecutionContext::cuda_graphs() const { return state_->graphs; }

ExecutionContext::GraphStats ExecutionContext::graph_stats() const { return state_->stats; }

size_t ExecutionContext::arena_bytes() const { return state_->arena_size; }

void ExecutionContext::set_profiling(bool enabled) {
  State& s = *state_;
  if (enabled == (s.timer != nullptr)) return;
  if (enabled) {
    s.timed.clear();
    s.timer = std::make_unique<LayerTimer>(*s.g);
  } else {
    s.timed = s.timer->records();
    s.timer.reset();
  }
}

bool ExecutionContext::profiling() const { return state_->timer != nullptr; }

std::vector<LayerProfileRecord> ExecutionContext::layer_profile() const {
  return state_->timer ? state_->timer->records() : state_->timed;
}

void ExecutionContext::set_input_shape(const std::string& name, const Dims& dims) {
  State& s = *state_;
  for (size_t i = 0; i < s.g->inputs.size(); ++i) {
    const PlanTensor& t = s.g->tensors[s.g->inputs[i]];
    if (t.name != name) continue;
    const ShapeRange& r = s.g->profiles[s.profile].profile.get(name);
    KILN_CHECK(dims.size() == t.dims.size(), InvalidInput, "input '", name, "': rank ", dims.size(),
               " given, expected ", t.dims.size());
    for (size_t d = 0; d < dims.size(); ++d) {
      KILN_CHECK(dims[d] >= r.min[d] && dims[d] <= r.max[d], InvalidInput, "input '", name, "': dim ", d,
                 " = ", dims[d], " is outside the range [", r.min[d], ", ", r.max[d],
                 "] of optimization profile ", s.profile);
    }
    s.input_dims[i] = dims;
    return;
  }
  KILN_FAIL(InvalidInput, "set_input_shape: the plan has no input named '", name, "'");
}

void ExecutionContext::set_tensor_address(const std::string& name, void* data) {
  state_->plan->binding(name);
  state_->addresses[name] = data;
}

void ExecutionContext::set_output_allocator(const std::string& name, OutputAllocator* allocator) {
  const Binding& b = state_->plan->binding(name);
  KILN_CHECK(!b.is_input, InvalidInput, "set_output_allocator: '", name, "' is an input");
  state_->allocators[name] = allocator;
}

Dims ExecutionContext::tensor_shape(const std::string& name) {
  state_->plan->binding(name);
  state_->run(false);
  for (size_t id = 0; id < state_->g->tensors.size(); ++id) {
    if (state_->g->tensors[id].name == name) return state_->dims[id];
  }
  KILN_FAIL(Internal, "binding '", name, "' has no tensor");
}

void ExecutionContext::execute(void* stream) {
  KILN_CHECK(!state_->g->weights_missing(), InvalidInput,
             "the plan's weights were stripped: refit them (Refitter) before executing");
  state_->stream = stream;
  if (state_->graphs && !state_->stats.fallback && !state_->timer) {
    state_->execute_graph();
    return;
  }
  if (!state_->timer) {
    state_->run(true);
    return;
  }
  state_->timer->start_run(stream);
  try {
    state_->run(true);
  } catch (...) {
    state_->timer->abandon_run();  // the stream is not left held
    throw;
  }
  state_->timer->finish_run(stream);
}

void ExecutionContext::State::give_up_graphs(const std::string& why) {
  graph.reset();
  stats.fallback = true;
  KILN_DEBUG("engine: CUDA graphs off for this execution context, executing plainly: ", why);
}

void ExecutionContext::State::execute_graph() {
  const GraphRecorder* recorder = g->backend->graph_recorder();
  if (recorder == nullptr || !cacheable) {
    give_up_graphs(recorder == nullptr
                       ? "backend '" + g->backend_name + "' cannot record graphs"
                       : std::string("the plan has a data-dependent output (nonzero), which waits "
                                     "for its stream"));
    run(true);
    return;
  }
  for (size_t i = 0; i < g->inputs.size(); ++i) {
    KILN_CHECK(input_dims[i].has_value(), InvalidInput, "input '", g->tensors[g->inputs[i]].name,
               "' has dynamic dims: call set_input_shape first");
  }
  bool match = graph != nullptr && graph_generation == g->refit_generation && graph_addresses == addresses &&
               graph_inputs.size() == g->inputs.size();
  for (size_t i = 0; match && i < g->inputs.size(); ++i) match = graph_inputs[i] == *input_dims[i];
  if (match) {
    graph->launch(stream);
    ++stats.replays;
    return;
  }
  // This call's results come from a plain run on the caller's stream; it also makes every kernel's lazily
  // created state for these shapes and buffers (cuBLASLt / cuDNN plans, handles), so that recording only
  // enqueues.
  run(true);
  void* caller_stream = stream;
  bool updated = false;
  try {
    // The graph is recorded from the shape cache the plain run left (run_cached): the same kernels, copies
    // and host values (host values travel as kernel parameters, so the graph holds them).
    updated = recorder->record(
        [this](void* capture_stream) {
          stream = capture_stream;
          run(true);
        },
        graph);
  } catch (const std::exception& e) {
    stream = caller_stream;
    give_up_graphs(std::string("recording failed: ") + e.what());
    return;
  }
  stream = caller_stream;
  graph_inputs.clear();
  for (size_t i = 0; i < g->inputs.size(); ++i) graph_inputs.push_back(*input_dims[i]);
  graph_addresses = addresses;
  graph_generation = g->refit_generation;
  ++stats.captures;
  if (updated) ++stats.updates;
}

void ExecutionContext::State::copy_constant_output(size_t li) {
  const Layer& l = g->layers[li].layer;
  const PlanTensor& t = g->tensors[l.outputs[0]];
  const HostTensor& w = l.weights[0].value;
  if (!t.is_output || w.nbytes() == 0) return;
  void* dst = user(t.name);
  if (!g->backend->host_accessible() && li < g->device_constants.size() && g->device_constants[li].data) {
    g->backend->copy(dst, g->device_constants[li].data, w.nbytes(), CopyKind::DeviceToDevice, stream);
  } else {
    g->backend->copy(dst, w.data(), w.nbytes(), CopyKind::HostToDevice, stream);
  }
}

void ExecutionContext::State::run(bool execute) {
  size_t nt = g->tensors.size();
  for (size_t i = 0; i < g->inputs.size(); ++i) {
    KILN_CHECK(input_dims[i].has_value(), InvalidInput, "input '", g->tensors[g->inputs[i]].name,
               "' has dynamic dims: call set_input_shape first");
  }
  bool reuse = execute && shapes_cached && cached_generation == g->refit_generation;
  for (size_t i = 0; reuse && i < g->inputs.size(); ++i) reuse = cached_inputs[i] == *input_dims[i];
  if (reuse) {
    run_cached();
    return;
  }
  shapes_cached = false;
  if (execute) plan_arena();
  dims.assign(nt, Dims{});
  values.assign(nt, std::nullopt);
  for (size_t i = 0; i < g->inputs.size(); ++i) dims[g->inputs[i]] = *input_dims[i];
  std::vector<bool> unknown(nt, false);  // dims depend on data not yet computed (shape-only runs)
  // Before a nonzero has run, its count is unknown (a shape-only run stops there) or, when executing, every
  // element (the arena holds the largest size; the kernel reports the real count).
  DataDependentGuess guess = execute ? DataDependentGuess::Max : DataDependentGuess::Unknown;
  for (size_t li = 0; li < g->layers.size(); ++li) {
    const Layer& l = g->layers[li].layer;
    std::vector<ShapeIn> in = plan_shape_inputs(*g, l, dims, values);
    bool any_unknown = std::any_of(l.inputs.begin(), l.inputs.end(), [&](int64_t id) { return unknown[id]; });
    std::vector<ShapeOut> outs = infer_layer_shapes(l, in);
    for (size_t o = 0; o < outs.size(); ++o) {
      int64_t id = l.outputs[o];
      dims[id] = guessed_dims(outs[o], in, guess);
      unknown[id] = any_unknown || outs[o].data_dependent;
    }
    if (!execute && any_unknown) continue;
    if (execute && timer) timer->begin(stream);
    run_layer(li, in, outs, execute, unknown);
    if (execute && timer) timer->end(li, stream);
  }
  if (execute && cacheable) {
    cached_inputs.assign(g->inputs.size(), Dims{});
    for (size_t i = 0; i < g->inputs.size(); ++i) cached_inputs[i] = *input_dims[i];
    cached_generation = g->refit_generation;
    shapes_cached = true;
  }
}

void ExecutionContext::State::run_layer(size_t li, const std::vector<ShapeIn>& in,
                                        const std::vector<ShapeOut>& outs, bool execute,
                                        std::vector<bool>& unknown) {
  const PlanLayer& pl = g->layers[li];
  const Layer& l = pl.layer;
  if (l.kind == LayerKind::Constant || pl.host) {
    values[l.outputs[0]] = host_value(l, pl.host, in, outs, HostValues::HostLayers);
  }
  if (l.kind == LayerKind::Constant) {
    if (execute) copy_constant_output(li);
    return;
  }
  if (pl.host) {
    int64_t out = l.outputs[0];
    // The builder marks a layer host only where its value is computable from shapes and small host values; a
    // plan that marks another layer host was not made by the builder (its bytes were edited).
    KILN_CHECK(values[out].has_value(), InvalidInput, "plan: host layer '", l.name,
               "' has no computable value (a layer the builder would not run on the host)");
    const HostTensor& v = *values[out];
    dims[out] = v.sizes();
    if (execute && v.nbytes()) {
      check_capacity(out);
      void* dst = address(out);
      // Host values are small (shape tensors); copy() has consumed the source when it returns.
      if (dst) g->backend->copy(dst, v.data(), v.nbytes(), CopyKind::HostToDevice, stream);
    }
    return;
  }
  if (!execute) return;
  KernelArgs args = run_kernel(li);
  for (size_t o = 0; o < outs.size(); ++o) {
    int64_t id = l.outputs[o];
    if (outs[o].data_dependent) {
      dims[id] = args.outputs[o].dims;
      unknown[id] = false;
    }
    // A data-dependent output (nonzero's, or a layer's after it) goes from the arena to its allocator's
    // buffer.
    const PlanTensor& t = g->tensors[id];
    if (!t.is_output || !g->data_dependent[id]) continue;
    int64_t bytes = bytes_of(dims[id], t.dtype);
    auto it = allocators.find(t.name);
    void* dst = nullptr;
    if (it != allocators.end() && it->second) {
      dst = it->second->reallocate_output(t.name, static_cast<size_t>(bytes));
      KILN_CHECK(dst != nullptr || bytes == 0, InvalidInput, "output allocator returned no memory for '",
                 t.name, "'");
      it->second->notify_shape(t.name, dims[id]);
    } else if (bytes > 0) {
      dst = user(t.name);
    }
    if (bytes) {
      g->backend->copy(dst, args.outputs[o].data, static_cast<size_t>(bytes), CopyKind::DeviceToDevice,
                       stream);
    }
  }
}

void ExecutionContext::State::run_cached() {
  for (size_t li = 0; li < g->layers.size(); ++li) {
    if (timer) timer->begin(stream);
    rerun_layer(li);
    if (timer) timer->end(li, stream);
  }
}

void ExecutionContext::State::rerun_layer(size_t li) {
  const PlanLayer& pl = g->layers[li];
  const Layer& l = pl.layer;
  if (l.kind == LayerKind::Constant) {
    copy_constant_output(li);
    return;
  }
  if (pl.host) {
    // The value is known; its arena bytes may have been reused since, so write it again.
    int64_t out = l.outputs[0];
    const HostTensor& v = *values[out];
    void* dst = address(out);
    if (dst && v.nbytes()) g->backend->copy(dst, v.data(), v.nbytes(), CopyKind::HostToDevice, stream);
    return;
  }
  run_kernel(li);
}

KernelArgs ExecutionContext::State::run_kernel(size_t li) {
  const PlanLayer& pl = g->layers[li];
  const Layer& l = pl.layer;
  KernelArgs args;
  // An empty tensor has no bytes: its binding may be null (an empty user buffer), and nothing reads it.
  auto data_of = [&](int64_t id) { return is_empty_dims(dims[id]) ? nullptr : address(id); };
  for (size_t k = 0; k < l.inputs.size(); ++k) {
    const PlanTensor& t = g->tensors[l.inputs[k]];
    args.inputs.push_back({data_of(l.inputs[k]), t.dtype, dims[l.inputs[k]], t.format});
    args.input_values.push_back(values[l.inputs[k]] ? &*values[l.inputs[k]] : nullptr);
  }
  for (int64_t id : l.outputs) {
    check_capacity(id);
    args.outputs.push_back({data_of(id), g->tensors[id].dtype, dims[id], g->tensors[id].format});
  }
  args.stream = stream;
  if (any_empty(args.inputs) || any_empty(args.outputs)) {
    // Kernel libraries divide by dims: empty tensors never reach a kernel (zero_volume.h).
    run_zero_volume(*g->backend, l, args);
    return args;
  }
  const Kernel* kernel = g->kernels[li].get();
  KILN_CHECK(kernel != nullptr, Internal, "layer '", l.name, "' has no kernel");
  if (states_generation != g->refit_generation) {
    // A refit re-created kernels, possibly at the addresses of the old ones: every state is made again.
    state_owner.assign(state_owner.size(), nullptr);
    states_generation = g->refit_generation;
  }
  if (state_owner[li] != kernel) {
    try {
      states[li] = kernel->create_state();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      KILN_FAIL(Internal, "layer '", l.name, "': kernel '", pl.tactic, "' failed: ", e.what());
    }
    state_owner[li] = kernel;
  }
  args.workspace = workspace.data;
  args.workspace_size = g->workspace_bytes;
  args.pool = g->backend->thread_pool();
  args.state = states[li].get();
  try {
    kernel->execute(args);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    KILN_FAIL(Internal, "layer '", l.name, "': kernel '", pl.tactic, "' failed: ", e.what());
  }
  return args;
}

}  // namespace kiln::engine
