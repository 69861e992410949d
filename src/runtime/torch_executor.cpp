#include "kiln/runtime/torch_executor.h"

#include <unordered_set>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/version.h>

#include "kiln/frontend/op_checks.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"
#include "kiln/ir/higher_order.h"
#include "runtime/builtin_ops.h"
#include "runtime/higher_order_runner.h"
#include "runtime/run_state.h"
#include "runtime/torch_convert.h"

namespace kiln::runtime {
namespace {

// Where one argument of libtorch's schema comes from: the node's argument, or the schema default.
struct ArgPlan {
  std::string name;
  const ir::Argument* arg = nullptr;
  c10::IValue fallback;
  c10::TypePtr type;
  c10::optional<int32_t> list_size;
};

// One node, resolved: a boxed dispatcher call, a builtin or a higher-order op (nested graphs).
struct Step {
  const ir::Node* node = nullptr;
  std::string op_text;
  c10::optional<c10::OperatorHandle> handle;
  std::vector<ArgPlan> args;
  BuiltinFn builtin = nullptr;
  std::shared_ptr<const HigherOrderRunner> higher_order;
};

std::string torch_version_text() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
}

ErrorContext node_context(const ir::Node& node) {
  ErrorContext context;
  context.node = node.name();
  context.op = node.target().to_string();
  return context;
}

bool schema_has_argument(const c10::FunctionSchema& schema, const std::string& name) {
  for (const c10::Argument& sa : schema.arguments()) {
    if (sa.name() == name) return true;
  }
  return false;
}

// The node's argument at `index` when it is positional and its name does not bind it by name: unnamed, or named
// after another overload's parameter (export writes `dropout_(self, ...)` functionalized as `dropout(input, ...)`
// with the name `self` kept).
const ir::NamedArgument* find_positional(const ir::Node& node, const c10::FunctionSchema& schema, size_t index) {
  if (index >= node.args().size()) return nullptr;
  const ir::NamedArgument& na = node.args()[index];
  if (na.name.empty()) return &na;
  if (!na.kwarg_only && !schema_has_argument(schema, na.name)) return &na;
  return nullptr;
}

// Matches the node's named arguments to libtorch's schema, in the schema's order.
std::vector<ArgPlan> plan_arguments(const ir::Node& node, const c10::FunctionSchema& schema) {
  std::vector<ArgPlan> plan;
  std::unordered_set<std::string> used;
  const auto& schema_args = schema.arguments();
  for (size_t i = 0; i < schema_args.size(); ++i) {
    const c10::Argument& sa = schema_args[i];
    ArgPlan p;
    p.name = sa.name();
    p.type = sa.type();
    p.list_size = sa.N();
    p.arg = node.find_arg(sa.name());
    if (p.arg == nullptr) {
      if (const ir::NamedArgument* positional = find_positional(node, schema, i)) {
        p.arg = &positional->value;
        used.insert(positional->name);
      }
    }
    if (p.arg != nullptr) {
      used.insert(sa.name());
    } else if (sa.default_value().has_value()) {
      p.fallback = *sa.default_value();
    } else if (sa.type()->kind() != c10::TypeKind::OptionalType) {
      KILN_FAIL(InvalidInput, "missing argument '", sa.name(), "' required by libtorch's schema ", toString(schema));
    }
    plan.push_back(std::move(p));
  }
  for (const ir::NamedArgument& na : node.args()) {
    if (na.name.empty() || used.count(na.name) != 0 || na.value.is_none()) continue;
    KILN_FAIL(Unsupported, "argument '", na.name, "' is not in libtorch ", torch_version_text(), "'s schema ",
              toString(schema));
  }
  return plan;
}

bool writes_argument(const c10::Argument& sa) { return sa.alias_info() != nullptr && sa.alias_info()->isWrite(); }

// Values an op writes although its schema does not say so: batch norm in training mode updates running_mean and
// running_var in place (aten::batch_norm declares them read-only). Copied per run like declared writes, so that
// runs stay independent and concurrent runs never race on the module's buffers.
std::vector<const ir::Value*> undeclared_writes(const ir::Node& node) {
  const std::string packet = node.target().packet();
  if (packet != "aten.batch_norm" && packet != "aten.native_batch_norm" && packet != "aten._native_batch_norm_legit") {
    return {};
  }
  const ir::Argument* training = node.find_arg("training");
  if (training == nullptr || training->kind() != ir::Argument::Kind::Bool || !training->as_bool()) return {};
  std::vector<const ir::Value*> out;
  for (const char* name : {"running_mean", "running_var"}) {
    const ir::Argument* a = node.find_arg(name);
    if (a == nullptr) continue;
    for (const ir::Value* v : a->values()) out.push_back(v);
  }
  return out;
}

// Flattens results into one IValue per node output (ops returning Tensor[] give one output per element).
void store_outputs(const Step& step, std::vector<c10::IValue>& results, RunState& state) {
  const auto& outputs = step.node->outputs();
  if (results.size() == outputs.size()) {
    for (size_t i = 0; i < outputs.size(); ++i) state.set(outputs[i], std::move(results[i]));
    return;
  }
  std::vector<c10::IValue> flat;
  for (c10::IValue& r : results) {
    if (r.isList()) {
      for (const c10::IValue& item : r.toListRef()) flat.push_back(item);
    } else if (r.isTuple()) {
      for (const c10::IValue& item : r.toTupleRef().elements()) flat.push_back(item);
    } else {
      flat.push_back(std::move(r));
    }
  }
  // The program's declaration, not Kiln, is wrong when the op returns fewer values than the node declares.
  KILN_CHECK(flat.size() >= outputs.size(), InvalidInput, "the node declares ", outputs.size(), " outputs but ",
             step.op_text, " returned ", flat.size(), " values");
  for (size_t i = 0; i < outputs.size(); ++i) state.set(outputs[i], std::move(flat[i]));
}

/// Whether `v` has the kind libtorch's schema type `t` needs (its boxed kernels assert on, or crash with, any
/// other); true for types this does not know.
bool fits_schema_type(const c10::IValue& v, const c10::TypePtr& t) {
  switch (t->kind()) {
    case c10::TypeKind::OptionalType:
      return v.isNone() || fits_schema_type(v, t->expectRef<c10::OptionalType>().getElementType());
    case c10::TypeKind::FloatType: return v.isDouble();
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: return v.isInt();
    case c10::TypeKind::BoolType: return v.isBool();
    case c10::TypeKind::StringType: return v.isString();
    case c10::TypeKind::TensorType: return v.isTensor();
    case c10::TypeKind::NumberType: return v.isInt() || v.isDouble() || v.isBool();
    case c10::TypeKind::ListType: {
      switch (t->expectRef<c10::ListType>().getElementType()->kind()) {
        case c10::TypeKind::IntType:
        case c10::TypeKind::SymIntType: return v.isIntList();
        case c10::TypeKind::FloatType: return v.isDoubleList();
        case c10::TypeKind::BoolType: return v.isBoolList();
        case c10::TypeKind::TensorType: return v.isTensorList();
        default: return v.isList();
      }
    }
    default: return true;
  }
}

/// A libtorch exception as a Kiln error on `node`: its own internal asserts ("INTERNAL ASSERT FAILED ... please
/// report a bug to PyTorch") mean the arguments reached a path libtorch does not handle, Unsupported; an
/// allocation failure is Unsupported (out of memory); anything else is libtorch refusing the arguments, InvalidInput.
Error torch_failure(const std::exception& e, const ir::Node& node) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    return Error(ErrorKind::Unsupported, "out of memory in libtorch running " + node.target().to_string(),
                 node_context(node));
  }
  std::string message = torch_error_message(e);
  const size_t assert_at = message.find("INTERNAL ASSERT FAILED");
  if (assert_at == std::string::npos) return Error(ErrorKind::InvalidInput, "libtorch: " + message, node_context(node));
  for (const char* noise : {", please report a bug to PyTorch.", "please report a bug to PyTorch."}) {
    const size_t at = message.find(noise);
    if (at != std::string::npos) message.erase(at, std::string(noise).size());
  }
  return Error(ErrorKind::Unsupported,
               "libtorch cannot run " + node.target().to_string() + " with these arguments (its internal check: " +
                   message + ")",
               node_context(node));
}

int64_t to_int_input(const c10::IValue& v, const ir::Value& input) {
  if (v.isInt()) return v.toInt();
  if (v.isTensor() && v.toTensor().numel() == 1 && !at::isFloatingType(v.toTensor().scalar_type())) {
    return v.toTensor().item<int64_t>();
  }
  KILN_FAIL(InvalidInput, "input '", input.name(), "' is a SymInt: pass an int or a one-element integer tensor");
}

}  // namespace

struct TorchExecutor::Impl {
  const ir::Graph* graph = nullptr;
  SlotMap slots;
  std::vector<Step> steps;
  std::vector<std::pair<const ir::Value*, at::Tensor>> constants;
  std::unordered_set<const ir::Value*> written;  // inputs and constants some op writes in place
  c10::optional<c10::Device> device;               // the device override, if any

  void bind_inputs(const std::vector<c10::IValue>& inputs, RunState& state) const;
};

namespace {

void add_slot(SlotMap& slots, const ir::Value* v) { slots.emplace(v, slots.size()); }

Step resolve(const ir::Node& node, c10::optional<c10::Device> device) {
  Step step;
  step.node = &node;
  step.op_text = node.target().to_string();
  KILN_CHECK(node.subgraph() == nullptr, Unsupported, "nodes with subgraphs cannot run through libtorch");
  auto unreadable = node.metadata().find(ir::kUnsupportedArgumentKey);
  KILN_CHECK(unreadable == node.metadata().end(), Unsupported, "cannot run '", step.op_text, "': ",
             unreadable == node.metadata().end() ? "" : unreadable->second);
  // Arguments libtorch would refuse, or crash on (a SIGFPE for groups = 2^62), never reach it: op_checks.h.
  frontend::check_node_arguments(node);
  if (ir::is_higher_order(node.target())) {
    step.higher_order = make_higher_order_runner(node, device);
    return step;
  }
  const BuiltinOp* builtin = find_builtin_op(step.op_text);
  if (builtin != nullptr && builtin->mode == BuiltinMode::Always) {
    step.builtin = builtin->fn;
    return step;
  }
  if (!node.target().is_python_operator()) {
    const std::string overload = node.target().overload == "default" ? "" : node.target().overload;
    auto handle = c10::Dispatcher::singleton().findSchema({node.target().qualified_name(), overload});
    if (handle.has_value()) {
      step.args = plan_arguments(node, handle->schema());
      step.handle = handle;
      return step;
    }
  }
  if (builtin != nullptr) {
    step.builtin = builtin->fn;
    return step;
  }
  KILN_FAIL(Unsupported, "operator '", step.op_text, "' is not known to libtorch ", torch_version_text(),
            " and Kiln has no implementation of it");
}

}  // namespace

TorchExecutor::TorchExecutor(const ir::Graph& graph, c10::optional<c10::Device> device)
    : impl_(std::make_unique<Impl>()) {
  impl_->graph = &graph;
  impl_->device = device;
  for (const ir::Value* v : graph.inputs()) add_slot(impl_->slots, v);
  for (const ir::Value* v : graph.constants()) {
    add_slot(impl_->slots, v);
    if (!v->is_tensor()) continue;
    KILN_CHECK(v->data().defined(), InvalidInput, "constant '", v->name(), "' (", v->fqn(), ") has no data");
    at::Tensor data = to_torch(v->data());
    impl_->constants.emplace_back(v, device ? data.to(*device) : data);
  }
  for (const ir::Node* node : graph.nodes()) {
    for (const ir::Value* out : node->outputs()) add_slot(impl_->slots, out);
    try {
      impl_->steps.push_back(resolve(*node, device));
    } catch (const Error& e) {
      throw e.with_context(node_context(*node));
    }
    for (const ir::Value* v : undeclared_writes(*node)) {
      if (v->role() != ir::ValueRole::NodeOutput) impl_->written.insert(v);
    }
    const Step& step = impl_->steps.back();
    if (!step.handle.has_value()) continue;
    const auto& schema_args = step.handle->schema().arguments();
    for (size_t i = 0; i < schema_args.size(); ++i) {
      const ir::Argument* arg = step.args[i].arg;
      if (!writes_argument(schema_args[i]) || arg == nullptr) continue;
      for (const ir::Value* v : arg->values()) {
        if (v->role() != ir::ValueRole::NodeOutput) impl_->written.insert(v);
      }
    }
  }
  if (!impl_->written.empty()) {
    KILN_DEBUG("torch executor: ", impl_->written.size(), " inputs/constants are written in place; copied per run");
  }
}

TorchExecutor::~TorchExecutor() = default;
TorchExecutor::TorchExecutor(TorchExecutor&&) noexcept = default;

void TorchExecutor::Impl::bind_inputs(const std::vector<c10::IValue>& inputs, RunState& state) const {
  const auto& graph_inputs = graph->inputs();
  KILN_CHECK(inputs.size() == graph_inputs.size(), InvalidInput, "the graph takes ", graph_inputs.size(),
             " inputs, got ", inputs.size());
  // First pass: bind shape symbols from dimensions that are a plain symbol.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value* input = graph_inputs[i];
    if (!input->is_tensor()) continue;
    KILN_CHECK(inputs[i].isTensor(), InvalidInput, "input '", input->name(), "' must be a tensor, got a ",
               inputs[i].tagKind());
    const at::Tensor& t = inputs[i].toTensor();
    const ir::TensorMeta& meta = input->meta();
    KILN_CHECK(t.scalar_type() == to_scalar_type(meta.dtype), InvalidInput, "input '", input->name(), "' has dtype ",
               c10::toString(t.scalar_type()), ", the program expects ", dtype_name(meta.dtype));
    KILN_CHECK(t.dim() == meta.rank(), InvalidInput, "input '", input->name(), "' has rank ", t.dim(),
               ", the program expects ", meta.to_string());
    for (int64_t d = 0; d < meta.rank(); ++d) {
      const ir::SymExpr& size = meta.sizes[static_cast<size_t>(d)];
      if (size.kind() != ir::SymExpr::Kind::Symbol) continue;
      auto [it, inserted] = state.bindings().emplace(size.symbol_name(), t.size(d));
      KILN_CHECK(inserted || it->second == t.size(d), InvalidInput, "input '", input->name(), "' dimension ", d,
                 " is ", t.size(d), " but symbol ", size.symbol_name(), " is already ", it->second);
    }
  }
  for (const auto& [symbol, value] : state.bindings()) {
    auto range = graph->symbol_ranges().find(symbol);
    if (range == graph->symbol_ranges().end()) continue;
    KILN_CHECK(value >= range->second.min && value <= range->second.max, InvalidInput, "symbol ", symbol, " = ",
               value, " is outside its range [", range->second.min, ", ",
               range->second.max == ir::SymRange::kUnbounded ? std::string("inf") : std::to_string(range->second.max),
               "]");
  }
  // Second pass: every dimension equals its expression; store the values.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value* input = graph_inputs[i];
    if (!input->is_tensor()) {
      if (input->kind() == ir::ValueKind::SymInt) {
        state.set(input, c10::IValue(to_int_input(inputs[i], *input)));
      } else {
        state.set(input, inputs[i]);
      }
      continue;
    }
    const at::Tensor& t = inputs[i].toTensor();
    const ir::TensorMeta& meta = input->meta();
    for (int64_t d = 0; d < meta.rank(); ++d) {
      const ir::SymExpr& size = meta.sizes[static_cast<size_t>(d)];
      bool bound = true;
      for (const std::string& s : size.free_symbols()) bound = bound && state.bindings().count(s) != 0;
      if (!bound) continue;
      int64_t expected = size.evaluate(state.bindings());
      KILN_CHECK(t.size(d) == expected, InvalidInput, "input '", input->name(), "' has shape ", t.sizes(),
                 ", the program expects ", meta.to_string());
    }
    state.set(input, written.count(input) != 0 ? c10::IValue(t.clone()) : inputs[i]);
  }
}

std::vector<c10::IValue> TorchExecutor::run(const std::vector<c10::IValue>& inputs) const {
  const Impl& impl = *impl_;
  RunState state(impl.slots, impl.slots.size());
  state.set_device_override(impl.device);
  impl.bind_inputs(inputs, state);
  for (const auto& [value, tensor] : impl.constants) {
    state.set(value, impl.written.count(value) != 0 ? c10::IValue(tensor.clone()) : c10::IValue(tensor));
  }
  for (const Step& step : impl.steps) {
    try {
      std::vector<c10::IValue> results;
      if (step.higher_order != nullptr) {
        results = step.higher_order->run(NodeArgs(*step.node, state));
      } else if (step.builtin != nullptr) {
        results = step.builtin(NodeArgs(*step.node, state));
      } else {
        torch::jit::Stack stack;
        stack.reserve(step.args.size());
        for (const ArgPlan& p : step.args) {
          c10::IValue v = p.arg != nullptr ? argument_to_ivalue(*p.arg, state) : p.fallback;
          v = coerce_to_schema_type(std::move(v), p.type, p.name, p.list_size);
          KILN_CHECK(fits_schema_type(v, p.type), InvalidInput, "argument '", p.name, "' is a ", v.tagKind(),
                     ", libtorch's schema expects ", p.type->annotation_str());
          stack.push_back(std::move(v));
        }
        step.handle->callBoxed(stack);
        results = std::move(stack);
      }
      store_outputs(step, results, state);
    } catch (const Error& e) {
      throw e.with_context(node_context(*step.node));
    } catch (const std::exception& e) {
      throw torch_failure(e, *step.node);
    }
  }
  std::vector<c10::IValue> outputs;
  outputs.reserve(impl.graph->outputs().size());
  for (const ir::Value* v : impl.graph->outputs()) outputs.push_back(state.get(v));
  return outputs;
}

}  // namespace kiln::runtime
