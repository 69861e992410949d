// CompiledModule: runs engine segments through execution contexts and the rest through libtorch.

#include "kiln/runtime/compiled_module.h"

#include <algorithm>
#include <chrono>

#include <ATen/ATen.h>

#include "kiln/engine/execution_context.h"
#include "kiln/runtime/torch_executor.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "runtime_core/context_pool.h"
#include "runtime_core/module_inputs.h"
#include "runtime_core/module_layout.h"
#include "runtime_core/module_profile.h"
#include "runtime/torch_convert.h"
#include "runtime/torch_device.h"

namespace kiln::runtime {
namespace {

// With CUDA graphs, the buffers a context's bindings stay bound to: a recorded graph replays only while the
// addresses it was recorded with repeat, so inputs are copied into `inputs` and outputs read out of `outputs` (as
// Torch-TensorRT's cudagraphs mode does) instead of binding each call's fresh tensors.
struct GraphBuffers {
  std::vector<at::Tensor> inputs, outputs;  // per segment input / output (undefined where unused)
};
using TensorContextPool = ContextPool<GraphBuffers>;

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

}  // namespace

struct CompiledModule::Impl {
  std::shared_ptr<const ir::Graph> graph;
  std::vector<EngineSegment> engines;
  std::string backend;
  std::vector<std::string> output_kinds;
  CallSpec call_spec;
  std::string compile_settings;
  bool use_cuda_graphs = false;
  bool static_shape_cuda_graphs = true;
  bool profiling = false;
  ModuleLayout layout;
  std::vector<std::unique_ptr<TensorContextPool>> pools;  // per engine
  std::vector<std::unique_ptr<TorchExecutor>> executors;  // per step (null for engine steps)
  std::vector<std::pair<size_t, at::Tensor>> constants;   // top-level constants engines or outputs read
  c10::Device device = c10::Device(c10::kCPU);
  std::unique_ptr<TorchRunProfile> torch_profile;  // PyTorch run times while profiling

  size_t slot(const ir::Value* v) const { return layout.slot(v); }
  void validate_inputs(const std::vector<at::Tensor>& inputs) const;
  /// Whether engine `k` runs through CUDA graphs under the two settings.
  bool graphs_for(size_t k) const;
  /// Hands each engine's pool its CUDA-graph setting (dropping the pooled contexts).
  void apply_cuda_graphs();
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

  m.layout = layout_module(*m.graph, m.engines);
  m.torch_profile = std::make_unique<TorchRunProfile>(m.layout.steps);
  m.pools.resize(m.engines.size());
  for (const ModuleStep& step : m.layout.steps) {
    if (step.segment == nullptr) {
      m.executors.push_back(std::make_unique<TorchExecutor>(*step.torch_graph, torch_device));
      continue;
    }
    m.executors.push_back(nullptr);
    m.pools[step.engine_index] = std::make_unique<TensorContextPool>(m.engines[step.engine_index].plan);
  }
  for (const auto& [s, v] : m.layout.constants) m.constants.emplace_back(s, to_torch(v->data()).to(m.device));
  m.apply_cuda_graphs();
}

bool CompiledModule::Impl::graphs_for(size_t k) const {
  // The cpu backend has no graphs: its contexts stay plain (the engine would only log that it falls back).
  if (backend == "cpu" || pools[k] == nullptr) return false;
  if (use_cuda_graphs) return true;
  if (!static_shape_cuda_graphs) return false;
  for (const engine::Binding& b : engines[k].plan->bindings()) {
    if (b.data_dependent) return false;
    if (b.is_input && std::find(b.dims.begin(), b.dims.end(), -1) != b.dims.end()) return false;
  }
  return true;
}

void CompiledModule::Impl::apply_cuda_graphs() {
  for (size_t k = 0; k < pools.size(); ++k) {
    if (pools[k]) pools[k]->set_cuda_graphs(graphs_for(k));
  }
}

CompiledModule::~CompiledModule() = default;

void CompiledModule::Impl::validate_inputs(const std::vector<at::Tensor>& inputs) const {
  std::vector<InputFacts> facts(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& t = inputs[i];
    InputFacts& f = facts[i];
    f.defined = t.defined();
    if (!f.defined) continue;
    f.device = t.device().str();
    f.dtype_text = c10::toString(t.scalar_type());
    try {
      f.dtype = from_scalar_type(t.scalar_type());
    } catch (const Error&) {
      f.dtype = std::nullopt;  // a dtype Kiln lacks matches no input
    }
    f.sizes.assign(t.sizes().begin(), t.sizes().end());
    f.one_integer = t.numel() == 1 && !at::isFloatingType(t.scalar_type());
  }
  check_module_inputs(*graph, facts, device.str());
}

void CompiledModule::Impl::run_engine(const ModuleStep& step, std::vector<c10::IValue>& env) const {
  const size_t k = step.engine_index;
  const EngineSegment& e = engines[k];
  void* stream = current_stream(device);
  ContextLease<GraphBuffers> lease(*pools[k], stream);
  engine::ExecutionContext& context = *lease;
  // With CUDA graphs, bindings go through the context's persistent buffers (PooledContext).
  const bool graphs = context.cuda_graphs();
  std::vector<at::Tensor> held;  // inputs converted for the engine, kept alive until it has run
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const engine::Binding* b = layout.input_bindings[k][i];
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
      at::Tensor& buffer = static_buffer(lease.buffers().inputs, i, t.sizes(), t.options());
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
    const engine::Binding* b = layout.output_bindings[k][i];
    const at::TensorOptions options = at::TensorOptions().dtype(to_scalar_type(b->dtype)).device(device);
    if (b->data_dependent) {
      allocators[i] = std::make_unique<TensorOutputAllocator>(options);
      context.set_output_allocator(b->name, allocators[i].get());
      continue;
    }
    engine::Dims dims = context.tensor_shape(b->name);
    outputs[i] = graphs ? static_buffer(lease.buffers().outputs, i, dims, options) : at::empty(dims, options);
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
  const ModuleStep& step = layout.steps[i];
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
  std::vector<c10::IValue> env(m.layout.slots.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value* v = m.graph->inputs()[i];
    env[m.slot(v)] = v->is_tensor() ? c10::IValue(inputs[i]) : c10::IValue(inputs[i].reshape({-1})[0].item<int64_t>());
  }
  for (const auto& [s, tensor] : m.constants) env[s] = c10::IValue(tensor);
  for (size_t i = 0; i < m.layout.steps.size(); ++i) {
    const ModuleStep& step = m.layout.steps[i];
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
  impl_->apply_cuda_graphs();
}

bool CompiledModule::static_shape_cuda_graphs() const { return impl_->static_shape_cuda_graphs; }

void CompiledModule::set_static_shape_cuda_graphs(bool enabled) {
  impl_->static_shape_cuda_graphs = enabled;
  impl_->apply_cuda_graphs();
}

size_t CompiledModule::cuda_graph_engines() const {
  size_t n = 0;
  for (size_t k = 0; k < impl_->pools.size(); ++k) n += impl_->graphs_for(k) ? 1 : 0;
  return n;
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
  return module_layer_profile(impl_->layout.steps, engine_records, *impl_->torch_profile);
}

void CompiledModule::set_output_kinds(std::vector<std::string> kinds) {
  check_output_kinds(*impl_->graph, kinds);
  impl_->output_kinds = std::move(kinds);
}

std::vector<size_t> CompiledModule::user_output_indices() const {
  return user_outputs(*impl_->graph, impl_->output_kinds);
}

ModuleSummary CompiledModule::summary() const { return summarize_steps(impl_->layout.steps); }

std::vector<SegmentInfo> CompiledModule::segments() const { return describe_steps(impl_->layout.steps); }

}  // namespace kiln::runtime
