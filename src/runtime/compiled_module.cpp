// CompiledModule: runs engine segments through execution contexts and the rest through libtorch.

#include "kiln/runtime/compiled_module.h"

#include <chrono>
#include <iterator>
#include <map>
#include <mutex>
#include <unordered_map>

#include <ATen/ATen.h>

#include "kiln/engine/execution_context.h"
#include "kiln/runtime/torch_executor.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "runtime/module_profile.h"
#include "runtime/module_steps.h"
#include "runtime/torch_convert.h"
#include "runtime/torch_device.h"

namespace kiln::runtime {
namespace {

// An execution context and, with CUDA graphs, the buffers its bindings stay bound to: a recorded graph
// replays only while the addresses it was recorded with repeat, so inputs are copied into `inputs` and
// outputs read out of `outputs` (as Torch-TensorRT's cudagraphs mode does) instead of binding each call's
// fresh tensors.
struct PooledContext {
  std::unique_ptr<engine::ExecutionContext> context;
  std::vector<at::Tensor> inputs, outputs;  // per segment input / output (undefined where unused)
};

// Execution contexts of one plan, reused across calls; a call takes one (or creates one) and gives it back. On a
// device backend a context's arena stays in use until its stream has run the queued work, so a context is only
// reused on the stream it last ran on (work on one stream runs in order); calls on other streams get their own.
class ContextPool {
 public:
  explicit ContextPool(std::shared_ptr<const engine::Plan> plan) : plan_(std::move(plan)) {}

  std::unique_ptr<PooledContext> acquire(void* stream) {
    bool graphs = false, profiling = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = free_.rbegin(); it != free_.rend(); ++it) {
        if (it->first != stream) continue;
        auto context = std::move(it->second);
        free_.erase(std::next(it).base());
        return context;
      }
      graphs = cuda_graphs_;
      profiling = profiling_;
    }
    auto pooled = std::make_unique<PooledContext>();
    pooled->context = std::make_unique<engine::ExecutionContext>(plan_, 0);
    pooled->context->set_cuda_graphs(graphs);
    pooled->context->set_profiling(profiling);
    return pooled;
  }

  void release(void* stream, std::unique_ptr<PooledContext> context) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (context->context->cuda_graphs() != cuda_graphs_) return;  // made before the setting changed
    context->context->set_profiling(profiling_);
    free_.emplace_back(stream, std::move(context));
  }

  /// Profiling on the pooled contexts and on those made from now on.
  void set_profiling(bool enabled) {
    std::lock_guard<std::mutex> lock(mutex_);
    profiling_ = enabled;
    for (auto& entry : free_) entry.second->context->set_profiling(enabled);
  }

  /// The profiles of the pooled contexts, summed.
  std::vector<engine::LayerProfileRecord> layer_profile() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<engine::LayerProfileRecord> profile;
    for (auto& entry : free_) {
      engine::accumulate_layer_profile(profile, entry.second->context->layer_profile());
    }
    return profile;
  }

  /// CUDA graphs on the contexts made from now on; the pooled ones are dropped.
  void set_cuda_graphs(bool enabled) {
    std::lock_guard<std::mutex> lock(mutex_);
    cuda_graphs_ = enabled;
    free_.clear();
  }

 private:
  std::shared_ptr<const engine::Plan> plan_;
  std::mutex mutex_;
  bool cuda_graphs_ = false;
  bool profiling_ = false;
  std::vector<std::pair<void*, std::unique_ptr<PooledContext>>> free_;
};

// Gives a context back to its pool when the call is done (also when it throws: a context that failed mid-run
// is dropped rather than reused, since its state is unknown).
class ContextLease {
 public:
  ContextLease(ContextPool& pool, void* stream) : pool_(pool), stream_(stream), context_(pool.acquire(stream)) {}
  ~ContextLease() {
    if (ok_) pool_.release(stream_, std::move(context_));
  }
  engine::ExecutionContext& operator*() { return *context_->context; }
  PooledContext& pooled() { return *context_; }
  void mark_ok() { ok_ = true; }

 private:
  ContextPool& pool_;
  void* stream_;
  std::unique_ptr<PooledContext> context_;
  bool ok_ = false;
};

/// Persistent buffer `index` of a context's CUDA-graph bindings, made anew when the shape, dtype or device
/// differ.
at::Tensor& static_buffer(std::vector<at::Tensor>& buffers, size_t index, at::IntArrayRef sizes,
                          const at::TensorOptions& options) {
  if (buffers.size() <= index) buffers.resize(index + 1);
  at::Tensor& b = buffers[index];
  if (!b.defined() || b.sizes() != sizes || b.scalar_type() != c10::typeMetaToScalarType(options.dtype()) ||
      b.device() != options.device()) {
    b = at::empty(sizes, options);
  }
  return b;
}

// Collects a data-dependent output into an at::Tensor on the module's device.
class TensorOutputAllocator : public engine::OutputAllocator {
 public:
  explicit TensorOutputAllocator(at::TensorOptions options) : options_(std::move(options)) {}
  void* reallocate_output(const std::string& name, size_t bytes) override {
    const size_t item = c10::elementSize(c10::typeMetaToScalarType(options_.dtype()));
    int64_t elements = static_cast<int64_t>((bytes + item - 1) / item);
    if (!buffer_.defined() || buffer_.numel() < elements) {
      buffer_ = at::empty({std::max<int64_t>(elements, 1)}, options_);
    }
    return buffer_.data_ptr();
  }
  void notify_shape(const std::string& name, const engine::Dims& dims) override { dims_ = dims; }
  at::Tensor result() const {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    if (!buffer_.defined()) return at::empty(dims_, options_);
    return buffer_.narrow(0, 0, n).view(dims_).clone();
  }

 private:
  at::TensorOptions options_;
  at::Tensor buffer_;
  engine::Dims dims_;
};

std::string dims_text(at::IntArrayRef dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

struct CompiledModule::Impl {
  std::shared_ptr<const ir::Graph> graph;
  std::vector<EngineSegment> engines;
  std::string backend;
  std::vector<std::string> output_kinds;
  CallSpec call_spec;
  std::string compile_settings;
  bool use_cuda_graphs = false;
  bool profiling = false;
  std::vector<ModuleStep> steps;
  std::vector<std::unique_ptr<ContextPool>> pools;        // per engine
  std::vector<std::vector<const engine::Binding*>> input_bindings;   // per engine, per segment input (null: unbound)
  std::vector<std::vector<const engine::Binding*>> output_bindings;  // per engine, per segment output
  std::vector<std::unique_ptr<TorchExecutor>> executors;  // per step (null for engine steps)
  std::unordered_map<const ir::Value*, size_t> slots;     // top-level value -> environment slot
  std::vector<std::pair<size_t, at::Tensor>> constants;   // top-level constants engines or outputs read
  c10::Device device = c10::Device(c10::kCPU);
  std::unique_ptr<TorchRunProfile> torch_profile;  // PyTorch run times while profiling

  size_t slot(const ir::Value* v) const {
    auto it = slots.find(v);
    KILN_CHECK(it != slots.end(), Internal, "value '", v->name(), "' has no slot in the compiled module");
    return it->second;
  }
  void validate_inputs(const std::vector<at::Tensor>& inputs) const;
  void run_engine(const ModuleStep& step, std::vector<c10::IValue>& env) const;
  /// Runs the PyTorch run at step `i`; while profiling, also times it (waiting for the device before and
  /// after).
  void run_torch(size_t i, std::vector<c10::IValue>& env) const;
};

CompiledModule::CompiledModule(std::shared_ptr<const ir::Graph> graph, std::vector<EngineSegment> engines,
                               std::string backend)
    : impl_(std::make_unique<Impl>()) {
  KILN_CHECK(graph != nullptr, InvalidInput, "CompiledModule: no graph");
  Impl& m = *impl_;
  m.graph = std::move(graph);
  m.engines = std::move(engines);
  m.backend = std::move(backend);
  m.device = backend_device(m.backend);
  // Off the CPU, the PyTorch runs execute on the module's device whatever device the program was exported on.
  const c10::optional<c10::Device> torch_device =
      m.device.is_cpu() ? c10::nullopt : c10::optional<c10::Device>(m.device);

  std::map<std::string, size_t> engine_index;
  for (size_t i = 0; i < m.engines.size(); ++i) {
    const EngineSegment& e = m.engines[i];
    KILN_CHECK(e.plan != nullptr, InvalidInput, "engine segment '", e.node, "' has no plan");
    KILN_CHECK(engine_index.emplace(e.node, i).second, InvalidInput, "engine segment '", e.node, "' given twice");
  }
  m.steps = plan_module_steps(*m.graph, engine_index);
  m.torch_profile = std::make_unique<TorchRunProfile>(m.steps);
  std::vector<bool> engine_used(m.engines.size(), false);

  for (const ir::Value* v : m.graph->inputs()) m.slots.emplace(v, m.slots.size());
  m.pools.resize(m.engines.size());
  m.input_bindings.resize(m.engines.size());
  m.output_bindings.resize(m.engines.size());
  for (ModuleStep& step : m.steps) {
    for (const ir::Value* v : step.outputs) m.slots.emplace(v, m.slots.size());
    if (step.segment == nullptr) {
      m.executors.push_back(std::make_unique<TorchExecutor>(*step.torch_graph, torch_device));
      continue;
    }
    m.executors.push_back(nullptr);
    const size_t k = step.engine_index;
    engine_used[k] = true;
    const EngineSegment& e = m.engines[k];
    const ir::Graph& sub = *step.segment->subgraph();
    KILN_CHECK(e.input_bindings.size() == sub.inputs().size(), InvalidInput, "engine segment '", e.node, "' has ",
               sub.inputs().size(), " inputs but ", e.input_bindings.size(), " input bindings");
    KILN_CHECK(e.output_bindings.size() == sub.outputs().size(), InvalidInput, "engine segment '", e.node, "' has ",
               sub.outputs().size(), " outputs but ", e.output_bindings.size(), " output bindings");
    for (size_t i = 0; i < e.input_bindings.size(); ++i) {
      const engine::Binding* b = nullptr;
      if (!e.input_bindings[i].empty()) {
        b = &e.plan->binding(e.input_bindings[i]);
        KILN_CHECK(b->is_input, InvalidInput, "engine segment '", e.node, "': binding '", b->name,
                   "' is not an input of its plan");
      } else {
        KILN_CHECK(!sub.inputs()[i]->is_tensor(), InvalidInput, "engine segment '", e.node, "': tensor input '",
                   sub.inputs()[i]->name(), "' has no binding");
      }
      m.input_bindings[k].push_back(b);
    }
    for (size_t i = 0; i < e.output_bindings.size(); ++i) {
      const engine::Binding* b = &e.plan->binding(e.output_bindings[i]);
      KILN_CHECK(!b->is_input, InvalidInput, "engine segment '", e.node, "': binding '", b->name,
                 "' is not an output of its plan");
      m.output_bindings[k].push_back(b);
    }
    m.pools[k] = std::make_unique<ContextPool>(e.plan);
  }
  for (size_t i = 0; i < m.engines.size(); ++i) {
    KILN_CHECK(engine_used[i], InvalidInput, "engine '", m.engines[i].node,
               "' matches no engine segment node of the graph");
  }
  // Top-level constants read by engine segments or returned directly live in the environment.
  std::vector<const ir::Value*> needed(m.graph->outputs().begin(), m.graph->outputs().end());
  for (const ModuleStep& step : m.steps) {
    if (step.segment != nullptr) needed.insert(needed.end(), step.inputs.begin(), step.inputs.end());
  }
  for (const ir::Value* v : needed) {
    if (v->role() != ir::ValueRole::Constant || m.slots.count(v) != 0) continue;
    KILN_CHECK(v->data().defined(), InvalidInput, "constant '", v->name(), "' has no data");
    size_t s = m.slots.size();
    m.slots.emplace(v, s);
    m.constants.emplace_back(s, to_torch(v->data()).to(m.device));
  }
  for (const ir::Value* v : m.graph->outputs()) m.slot(v);  // every output is produced somewhere
}

CompiledModule::~CompiledModule() = default;

void CompiledModule::Impl::validate_inputs(const std::vector<at::Tensor>& inputs) const {
  const auto& graph_inputs = graph->inputs();
  KILN_CHECK(inputs.size() == graph_inputs.size(), InvalidInput, "the module takes ", graph_inputs.size(),
             " inputs, got ", inputs.size());
  ir::SymBindings bindings;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& input = *graph_inputs[i];
    const at::Tensor& t = inputs[i];
    KILN_CHECK(t.defined(), InvalidInput, "input ", i, " ('", input.name(), "') is an undefined tensor");
    if (!input.is_tensor()) {
      KILN_CHECK(t.numel() == 1 && !at::isFloatingType(t.scalar_type()), InvalidInput, "input '", input.name(),
                 "' is a SymInt: pass a one-element integer tensor");
      continue;
    }
    KILN_CHECK(t.device() == device, InvalidInput, "input '", input.name(), "' is on ", t.device().str(),
               ", the module runs on ", device.str());
    const ir::TensorMeta& meta = input.meta();
    KILN_CHECK(t.scalar_type() == to_scalar_type(meta.dtype), InvalidInput, "input '", input.name(), "' has dtype ",
               c10::toString(t.scalar_type()), ", the module expects ", dtype_name(meta.dtype));
    KILN_CHECK(t.dim() == meta.rank(), InvalidInput, "input '", input.name(), "' has rank ", t.dim(), " (shape ",
               dims_text(t.sizes()), "), the module expects ", meta.to_string());
    for (int64_t d = 0; d < meta.rank(); ++d) {
      const ir::SymExpr& size = meta.sizes[static_cast<size_t>(d)];
      if (auto fixed = size.as_int()) {
        KILN_CHECK(t.size(d) == *fixed, InvalidInput, "input '", input.name(), "' dim ", d, " is ", t.size(d),
                   " (shape ", dims_text(t.sizes()), "), the module expects ", meta.to_string());
        continue;
      }
      if (size.kind() != ir::SymExpr::Kind::Symbol) continue;
      const std::string& symbol = size.symbol_name();
      auto [it, inserted] = bindings.emplace(symbol, t.size(d));
      KILN_CHECK(inserted || it->second == t.size(d), InvalidInput, "input '", input.name(), "' dim ", d, " is ",
                 t.size(d), " but ", symbol, " is already ", it->second, " from another input");
      auto range = graph->symbol_ranges().find(symbol);
      if (range == graph->symbol_ranges().end()) continue;
      const ir::SymRange& r = range->second;
      KILN_CHECK(t.size(d) >= r.min && t.size(d) <= r.max, InvalidInput, "input '", input.name(), "' dim ", d, " (",
                 symbol, ") is ", t.size(d), ", outside the compiled range [", r.min, ", ",
                 r.max == ir::SymRange::kUnbounded ? std::string("inf") : std::to_string(r.max), "]");
    }
  }
  // Dims given by expressions of symbols (e.g. 2*s0) must agree with the bound symbols.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& input = *graph_inputs[i];
    if (!input.is_tensor()) continue;
    for (int64_t d = 0; d < input.meta().rank(); ++d) {
      const ir::SymExpr& size = input.meta().sizes[static_cast<size_t>(d)];
      if (size.is_constant() || size.kind() == ir::SymExpr::Kind::Symbol) continue;
      bool bound = true;
      for (const std::string& s : size.free_symbols()) bound = bound && bindings.count(s) != 0;
      if (!bound) continue;
      int64_t expected = size.evaluate(bindings);
      KILN_CHECK(inputs[i].size(d) == expected, InvalidInput, "input '", input.name(), "' dim ", d, " is ",
                 inputs[i].size(d), ", the module expects ", size.to_string(), " = ", expected);
    }
  }
}

void CompiledModule::Impl::run_engine(const ModuleStep& step, std::vector<c10::IValue>& env) const {
  const size_t k = step.engine_index;
  const EngineSegment& e = engines[k];
  void* stream = current_stream(device);
  ContextLease lease(*pools[k], stream);
  engine::ExecutionContext& context = *lease;
  // With CUDA graphs, bindings go through the context's persistent buffers (PooledContext).
  const bool graphs = context.cuda_graphs();
  std::vector<at::Tensor> held;  // inputs converted for the engine, kept alive until it has run
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const engine::Binding* b = input_bindings[k][i];
    if (b == nullptr) continue;
    const c10::IValue& v = env[slot(step.inputs[i])];
    at::Tensor t;
    if (v.isTensor()) {
      t = v.toTensor();
    } else if (v.isInt()) {
      t = at::scalar_tensor(v.toInt(), at::kLong);
    } else if (v.isDouble()) {
      t = at::scalar_tensor(v.toDouble(), at::kDouble);
    } else {
      KILN_FAIL(Internal, "engine '", e.node, "' input '", b->name, "' is not a tensor (", v.tagKind(), ")");
    }
    // No copy when device, dtype and layout already fit (the usual case). Scalars from SymInts, and tensors a
    // PyTorch run made on the CPU, move to the engine's device.
    const c10::ScalarType want = to_scalar_type(b->dtype);
    if (t.device() != device) t = t.to(device);
    if (t.scalar_type() != want) t = t.to(want);
    if (!t.is_contiguous()) t = t.contiguous();
    if (static_cast<int64_t>(b->dims.size()) != t.dim() && t.numel() == 1) {
      t = t.reshape(std::vector<int64_t>(b->dims.size(), 1));  // a scalar SymInt fed to an Int64 [1] binding
    }
    if (graphs) {
      at::Tensor& buffer = static_buffer(lease.pooled().inputs, i, t.sizes(), t.options());
      buffer.copy_(t);  // on the current stream, ahead of the engine's work
      t = buffer;
    }
    context.set_input_shape(b->name, engine::Dims(t.sizes().begin(), t.sizes().end()));
    context.set_tensor_address(b->name, t.data_ptr());
    held.push_back(std::move(t));
  }
  std::vector<at::Tensor> outputs(step.outputs.size());
  std::vector<std::unique_ptr<TensorOutputAllocator>> allocators(step.outputs.size());
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const engine::Binding* b = output_bindings[k][i];
    const at::TensorOptions options = at::TensorOptions().dtype(to_scalar_type(b->dtype)).device(device);
    if (b->data_dependent) {
      allocators[i] = std::make_unique<TensorOutputAllocator>(options);
      context.set_output_allocator(b->name, allocators[i].get());
      continue;
    }
    engine::Dims dims = context.tensor_shape(b->name);
    outputs[i] = graphs ? static_buffer(lease.pooled().outputs, i, dims, options) : at::empty(dims, options);
    context.set_tensor_address(b->name, outputs[i].data_ptr());
  }
  try {
    context.execute(stream);
  } catch (const Error& err) {
    throw err.with_context(ErrorContext{"", e.node, "", ""});
  }
  lease.mark_ok();
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    if (allocators[i]) outputs[i] = allocators[i]->result();
    if (graphs && !allocators[i])
      outputs[i] = outputs[i].clone();  // the buffer is the next call's output too
    const ir::Value* value = step.outputs[i];
    if (value->kind() == ir::ValueKind::SymInt) {
      env[slot(value)] = c10::IValue(outputs[i].reshape({-1})[0].item<int64_t>());
    } else {
      env[slot(value)] = c10::IValue(std::move(outputs[i]));
    }
  }
}

void CompiledModule::Impl::run_torch(size_t i, std::vector<c10::IValue>& env) const {
  const ModuleStep& step = steps[i];
  std::vector<c10::IValue> args;
  args.reserve(step.inputs.size());
  for (const ir::Value* v : step.inputs) args.push_back(env[slot(v)]);
  std::chrono::steady_clock::time_point start;
  if (profiling) {
    synchronize_stream(device);
    start = std::chrono::steady_clock::now();
  }
  std::vector<c10::IValue> results = executors[i]->run(args);
  if (profiling) {
    synchronize_stream(device);
    torch_profile->add(
        i, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  KILN_CHECK(results.size() == step.outputs.size(), Internal, "a PyTorch run returned ", results.size(),
             " values, expected ", step.outputs.size());
  for (size_t j = 0; j < results.size(); ++j) env[slot(step.outputs[j])] = std::move(results[j]);
}

std::vector<at::Tensor> CompiledModule::execute(const std::vector<at::Tensor>& inputs) const {
  const Impl& m = *impl_;
  m.validate_inputs(inputs);
  std::vector<c10::IValue> env(m.slots.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value* v = m.graph->inputs()[i];
    env[m.slot(v)] = v->is_tensor() ? c10::IValue(inputs[i]) : c10::IValue(inputs[i].reshape({-1})[0].item<int64_t>());
  }
  for (const auto& [s, tensor] : m.constants) env[s] = c10::IValue(tensor);
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const ModuleStep& step = m.steps[i];
    if (step.segment != nullptr) {
      m.run_engine(step, env);
    } else {
      m.run_torch(i, env);
    }
    for (const ir::Value* v : step.last_uses) env[m.slot(v)] = c10::IValue();
  }
  std::vector<at::Tensor> outputs;
  outputs.reserve(m.graph->outputs().size());
  for (const ir::Value* v : m.graph->outputs()) {
    const c10::IValue& r = env[m.slot(v)];
    if (r.isTensor()) {
      outputs.push_back(r.toTensor());
    } else if (r.isInt()) {
      outputs.push_back(at::scalar_tensor(r.toInt(), at::kLong));
    } else if (r.isDouble()) {
      outputs.push_back(at::scalar_tensor(r.toDouble(), at::kDouble));
    } else if (r.isBool()) {
      outputs.push_back(at::scalar_tensor(r.toBool(), at::kBool));
    } else {
      KILN_FAIL(Internal, "output '", v->name(), "' is not a tensor (", r.tagKind(), ")");
    }
  }
  return outputs;
}

std::vector<HostTensor> CompiledModule::execute_host(const std::vector<HostTensor>& inputs) const {
  std::vector<at::Tensor> torch_inputs;
  torch_inputs.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    at::Tensor t = to_torch(inputs[i]);
    const bool tensor_input = i < impl_->graph->inputs().size() && impl_->graph->inputs()[i]->is_tensor();
    torch_inputs.push_back(tensor_input ? t.to(impl_->device) : t);
  }
  std::vector<HostTensor> outputs;
  for (const at::Tensor& t : execute(torch_inputs)) outputs.push_back(from_torch(t.cpu()));
  return outputs;
}

std::string CompiledModule::device() const { return impl_->device.str(); }

void CompiledModule::synchronize() const { synchronize_stream(impl_->device); }

const ir::Graph& CompiledModule::graph() const { return *impl_->graph; }
const std::shared_ptr<const ir::Graph>& CompiledModule::shared_graph() const { return impl_->graph; }
const std::vector<EngineSegment>& CompiledModule::engines() const { return impl_->engines; }
const std::string& CompiledModule::backend() const { return impl_->backend; }
const std::vector<std::string>& CompiledModule::output_kinds() const { return impl_->output_kinds; }

const CallSpec& CompiledModule::call_spec() const { return impl_->call_spec; }
void CompiledModule::set_call_spec(CallSpec spec) { impl_->call_spec = std::move(spec); }

bool CompiledModule::use_cuda_graphs() const { return impl_->use_cuda_graphs; }
const std::string& CompiledModule::compile_settings() const { return impl_->compile_settings; }
void CompiledModule::set_compile_settings(std::string json_text) { impl_->compile_settings = std::move(json_text); }

void CompiledModule::set_use_cuda_graphs(bool enabled) {
  impl_->use_cuda_graphs = enabled;
  // The cpu backend has no graphs: its contexts stay plain (the engine would only log that it falls back).
  for (auto& pool : impl_->pools) {
    if (pool) pool->set_cuda_graphs(enabled && impl_->backend != "cpu");
  }
}

bool CompiledModule::profiling() const { return impl_->profiling; }

void CompiledModule::set_profiling(bool enabled) {
  if (enabled && !impl_->profiling) impl_->torch_profile->clear();
  impl_->profiling = enabled;
  for (auto& pool : impl_->pools) {
    if (pool) pool->set_profiling(enabled);
  }
}

std::vector<engine::LayerProfileRecord> CompiledModule::layer_profile() const {
  std::vector<std::vector<engine::LayerProfileRecord>> engine_records(impl_->pools.size());
  for (size_t k = 0; k < impl_->pools.size(); ++k) {
    if (impl_->pools[k]) engine_records[k] = impl_->pools[k]->layer_profile();
  }
  return module_layer_profile(impl_->steps, engine_records, *impl_->torch_profile);
}

void CompiledModule::set_output_kinds(std::vector<std::string> kinds) {
  KILN_CHECK(kinds.empty() || kinds.size() == impl_->graph->outputs().size(), InvalidInput, "CompiledModule: ",
             kinds.size(), " output kinds for ", impl_->graph->outputs().size(), " outputs");
  for (size_t i = 0; i < kinds.size(); ++i) {
    KILN_CHECK(kinds[i] == "user_output" || kinds[i] == "other", InvalidInput, "CompiledModule: output ", i, " ('",
               impl_->graph->outputs()[i]->name(), "') has the unknown output kind '", kinds[i],
               "' (expected 'user_output' or 'other')");
  }
  impl_->output_kinds = std::move(kinds);
}

std::vector<size_t> CompiledModule::user_output_indices() const {
  std::vector<size_t> indices;
  for (size_t i = 0; i < impl_->graph->outputs().size(); ++i) {
    if (impl_->output_kinds.empty() || impl_->output_kinds[i] == "user_output") indices.push_back(i);
  }
  return indices;
}

ModuleSummary CompiledModule::summary() const {
  ModuleSummary s;
  for (const ModuleStep& step : impl_->steps) {
    if (step.segment != nullptr) {
      ++s.engine_segments;
      s.engine_nodes += step.num_nodes;
    } else {
      ++s.torch_runs;
      s.torch_nodes += step.num_nodes;
    }
  }
  return s;
}

std::vector<SegmentInfo> CompiledModule::segments() const {
  std::vector<SegmentInfo> out;
  for (size_t i = 0; i < impl_->steps.size(); ++i) {
    const ModuleStep& step = impl_->steps[i];
    SegmentInfo info{step.segment != nullptr, step_name(step, i), step.num_nodes, {}};
    const ir::Graph& nodes = step.segment != nullptr ? *step.segment->subgraph() : *step.torch_graph;
    for (const ir::Node* n : nodes.nodes()) ++info.ops[n->target().to_string()];
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace kiln::runtime
