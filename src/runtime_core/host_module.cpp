// HostModule: runs a compiled module's engine steps through execution contexts with host tensors, and its PyTorch
// steps, if any, through the PyTorch plug-in. No libtorch here.

#include "kiln/runtime/host_module.h"

#include <set>

#include "kiln/engine/backend.h"
#include "kiln/runtime/torch_plugin.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "runtime_core/context_pool.h"
#include "runtime_core/module_archive_read.h"
#include "runtime_core/module_inputs.h"
#include "runtime_core/module_layout.h"

namespace kiln::runtime {
namespace {

struct NoBuffers {};
using HostContextPool = ContextPool<NoBuffers>;

// Device memory of a device backend (cuda), freed when it goes out of scope.
class DeviceBuffer {
 public:
  DeviceBuffer(const engine::Backend& backend, size_t bytes)
      : backend_(&backend), data_(backend.allocate(std::max<size_t>(bytes, 1))) {}
  ~DeviceBuffer() { backend_->deallocate(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }

 private:
  const engine::Backend* backend_;
  void* data_;
};

// Collects a data-dependent output: in host memory, or (device backends) in device memory copied back by result().
class HostOutputAllocator : public engine::OutputAllocator {
 public:
  HostOutputAllocator(DType dtype, const engine::Backend* device) : dtype_(dtype), device_(device) {}
  void* reallocate_output(const std::string& name, size_t bytes) override {
    if (device_ != nullptr) {
      if (!buffer_ || bytes_ < bytes) buffer_ = std::make_unique<DeviceBuffer>(*device_, bytes);
    } else if (host_.size() < bytes) {
      host_.resize(bytes);
    }
    bytes_ = std::max(bytes_, bytes);
    return device_ != nullptr ? buffer_->data() : static_cast<void*>(host_.data());
  }
  void notify_shape(const std::string& name, const engine::Dims& dims) override { dims_ = dims; }
  HostTensor result() {
    HostTensor out(dtype_, dims_);
    if (out.nbytes() == 0) return out;
    KILN_CHECK(out.nbytes() <= bytes_, Internal, "a data-dependent output of ", out.nbytes(),
               " bytes was written to ", bytes_, " bytes");
    if (device_ != nullptr) {
      device_->copy(out.mutable_data(), buffer_->data(), out.nbytes(), engine::CopyKind::DeviceToHost, nullptr);
      device_->synchronize(nullptr);
    } else {
      std::copy(host_.begin(), host_.begin() + static_cast<std::ptrdiff_t>(out.nbytes()), out.mutable_data());
    }
    return out;
  }

 private:
  DType dtype_;
  const engine::Backend* device_;
  std::vector<uint8_t> host_;
  std::unique_ptr<DeviceBuffer> buffer_;
  size_t bytes_ = 0;
  engine::Dims dims_;
};

InputFacts facts_of(const HostTensor& t) {
  InputFacts f;
  f.defined = t.defined();
  f.dtype = t.dtype();
  f.dtype_text = dtype_name(t.dtype());
  f.sizes = t.sizes();
  f.one_integer = t.defined() && t.numel() == 1 && !is_floating(t.dtype());
  return f;
}

// "2 PyTorch steps (ops: aten.gelu.default, aten.sin.default)": what needs the plug-in.
std::string torch_need(const std::vector<ModuleStep>& steps) {
  size_t count = 0;
  std::set<std::string> ops;
  for (const ModuleStep& step : steps) {
    if (step.segment != nullptr) continue;
    ++count;
    for (const ir::Node* n : step.torch_graph->nodes()) ops.insert(n->target().to_string());
  }
  std::string need = std::to_string(count) + (count == 1 ? " PyTorch step" : " PyTorch steps") + " (ops: ";
  for (auto it = ops.begin(); it != ops.end(); ++it) need += (it == ops.begin() ? "" : ", ") + *it;
  return need + ")";
}

}  // namespace

struct HostModule::Impl {
  std::shared_ptr<const ir::Graph> graph;
  std::vector<EngineSegment> engines;
  std::string backend;
  std::vector<std::string> output_kinds;
  ModuleLayout layout;
  std::vector<std::unique_ptr<HostContextPool>> pools;  // per engine
  std::vector<std::unique_ptr<TorchRun>> torch_runs;    // per step (null for engine steps)
  std::unique_ptr<engine::Backend> device;              // a device backend's memory and copies; null on cpu

  void run_engine(const ModuleStep& step, std::vector<HostTensor>& env) const;
};

HostModule::HostModule(std::shared_ptr<const ir::Graph> graph, std::vector<EngineSegment> engines,
                       std::string backend)
    : impl_(std::make_unique<Impl>()) {
  KILN_CHECK(graph != nullptr, InvalidInput, "HostModule: no graph");
  Impl& m = *impl_;
  m.graph = std::move(graph);
  m.engines = std::move(engines);
  m.backend = std::move(backend);
  if (m.backend != "cpu") {  // engines on the cpu backend read and write host memory
    m.device = engine::create_backend(m.backend);
    if (m.device->host_accessible()) m.device.reset();
  }
  m.layout = layout_module(*m.graph, m.engines);
  m.pools.resize(m.engines.size());
  const TorchPlugin* plugin = nullptr;
  for (const ModuleStep& step : m.layout.steps) {
    if (step.segment != nullptr) {
      m.torch_runs.push_back(nullptr);
      m.pools[step.engine_index] = std::make_unique<HostContextPool>(m.engines[step.engine_index].plan);
      continue;
    }
    if (plugin == nullptr) plugin = &torch_plugin(torch_need(m.layout.steps));
    m.torch_runs.push_back(plugin->prepare(step.torch_graph, m.backend));
  }
}

HostModule::~HostModule() = default;

std::shared_ptr<HostModule> HostModule::load(const std::string& path) {
  return load_from_bytes(read_file_bytes(path), path);
}

std::shared_ptr<HostModule> HostModule::load_from_bytes(std::vector<uint8_t> bytes, const std::string& label) {
  ModuleArchiveContents contents = read_module_archive(open_module_zip(std::move(bytes), label), label);
  try {
    auto module = std::make_shared<HostModule>(std::shared_ptr<const ir::Graph>(std::move(contents.graph)),
                                               std::move(contents.engines), contents.backend);
    module->set_output_kinds(std::move(contents.output_kinds));
    return module;
  } catch (const Error& e) {
    throw e.with_context(ErrorContext{label, "", "", ""});
  }
}

void HostModule::Impl::run_engine(const ModuleStep& step, std::vector<HostTensor>& env) const {
  const size_t k = step.engine_index;
  const EngineSegment& e = engines[k];
  ContextLease<NoBuffers> lease(*pools[k], nullptr);
  engine::ExecutionContext& context = *lease;
  std::vector<HostTensor> held;                             // inputs converted for the engine
  std::vector<std::unique_ptr<DeviceBuffer>> device_memory;  // cuda: the bindings' device copies
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const engine::Binding* b = layout.input_bindings[k][i];
    if (b == nullptr) continue;
    HostTensor t = env[layout.slot(step.inputs[i])];
    KILN_CHECK(t.defined(), Internal, "engine '", e.node, "' input '", b->name, "' has no value");
    if (t.dtype() != b->dtype) t = t.to(b->dtype);
    if (t.dim() != static_cast<int64_t>(b->dims.size()) && t.numel() == 1) {
      t = t.reshaped(std::vector<int64_t>(b->dims.size(), 1));  // a scalar SymInt fed to an Int64 [1] binding
    }
    context.set_input_shape(b->name, engine::Dims(t.sizes().begin(), t.sizes().end()));
    void* address = const_cast<uint8_t*>(t.data());  // engines only read their inputs
    if (device) {
      device_memory.push_back(std::make_unique<DeviceBuffer>(*device, t.nbytes()));
      device->copy(device_memory.back()->data(), t.data(), t.nbytes(), engine::CopyKind::HostToDevice, nullptr);
      address = device_memory.back()->data();
    }
    context.set_tensor_address(b->name, address);
    held.push_back(std::move(t));
  }
  std::vector<HostTensor> outputs(step.outputs.size());
  std::vector<std::unique_ptr<HostOutputAllocator>> allocators(step.outputs.size());
  std::vector<DeviceBuffer*> output_memory(step.outputs.size(), nullptr);
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const engine::Binding* b = layout.output_bindings[k][i];
    if (b->data_dependent) {
      allocators[i] = std::make_unique<HostOutputAllocator>(b->dtype, device.get());
      context.set_output_allocator(b->name, allocators[i].get());
      continue;
    }
    outputs[i] = HostTensor(b->dtype, context.tensor_shape(b->name));
    void* address = outputs[i].mutable_data();
    if (device) {
      device_memory.push_back(std::make_unique<DeviceBuffer>(*device, outputs[i].nbytes()));
      output_memory[i] = device_memory.back().get();
      address = output_memory[i]->data();
    }
    context.set_tensor_address(b->name, address);
  }
  try {
    context.execute(nullptr);
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      if (output_memory[i] == nullptr) continue;
      device->copy(outputs[i].mutable_data(), output_memory[i]->data(), outputs[i].nbytes(),
                   engine::CopyKind::DeviceToHost, nullptr);
    }
    if (device) device->synchronize(nullptr);
  } catch (const Error& err) {
    throw err.with_context(ErrorContext{"", e.node, "", ""});
  }
  lease.mark_ok();
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    if (allocators[i]) outputs[i] = allocators[i]->result();
    const ir::Value* value = step.outputs[i];
    if (value->kind() == ir::ValueKind::SymInt) outputs[i] = outputs[i].reshaped({});
    env[layout.slot(value)] = std::move(outputs[i]);
  }
}

std::vector<HostTensor> HostModule::execute(const std::vector<HostTensor>& inputs) const {
  const Impl& m = *impl_;
  std::vector<InputFacts> facts;
  facts.reserve(inputs.size());
  for (const HostTensor& t : inputs) facts.push_back(facts_of(t));
  check_module_inputs(*m.graph, facts, "");
  std::vector<HostTensor> env(m.layout.slots.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value* v = m.graph->inputs()[i];
    env[m.layout.slot(v)] = v->is_tensor() ? inputs[i] : inputs[i].to(DType::Int64).reshaped({});
  }
  for (const auto& [s, v] : m.layout.constants) env[s] = v->data();
  for (size_t i = 0; i < m.layout.steps.size(); ++i) {
    const ModuleStep& step = m.layout.steps[i];
    if (step.segment != nullptr) {
      m.run_engine(step, env);
    } else {
      std::vector<HostTensor> args;
      args.reserve(step.inputs.size());
      for (const ir::Value* v : step.inputs) args.push_back(env[m.layout.slot(v)]);
      std::vector<HostTensor> results = m.torch_runs[i]->run(args);
      KILN_CHECK(results.size() == step.outputs.size(), Internal, "a PyTorch run returned ", results.size(),
                 " values, expected ", step.outputs.size());
      for (size_t j = 0; j < results.size(); ++j) env[m.layout.slot(step.outputs[j])] = std::move(results[j]);
    }
    for (const ir::Value* v : step.last_uses) env[m.layout.slot(v)] = HostTensor();
  }
  std::vector<HostTensor> outputs;
  outputs.reserve(m.graph->outputs().size());
  for (const ir::Value* v : m.graph->outputs()) outputs.push_back(env[m.layout.slot(v)]);
  return outputs;
}

const ir::Graph& HostModule::graph() const { return *impl_->graph; }
const std::vector<EngineSegment>& HostModule::engines() const { return impl_->engines; }
const std::string& HostModule::backend() const { return impl_->backend; }
ModuleSummary HostModule::summary() const { return summarize_steps(impl_->layout.steps); }
std::vector<SegmentInfo> HostModule::segments() const { return describe_steps(impl_->layout.steps); }
const std::vector<std::string>& HostModule::output_kinds() const { return impl_->output_kinds; }

void HostModule::set_output_kinds(std::vector<std::string> kinds) {
  check_output_kinds(*impl_->graph, kinds);
  impl_->output_kinds = std::move(kinds);
}

std::vector<size_t> HostModule::user_output_indices() const {
  return user_outputs(*impl_->graph, impl_->output_kinds);
}

}  // namespace kiln::runtime
