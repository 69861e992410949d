#include "rewrite.h"

#include <algorithm>
#include <set>

#include "kiln/support/error.h"

namespace kiln::lowering::detail {

using ir::Argument;
using ir::Graph;
using ir::NamedArgument;
using ir::Node;
using ir::SymExpr;
using ir::TensorMeta;
using ir::Value;

bool is_op(const Node& node, std::string_view target) { return node.target().to_string() == target; }

bool is_op_any(const Node& node, std::initializer_list<std::string_view> targets) {
  const std::string name = node.target().to_string();
  return std::any_of(targets.begin(), targets.end(), [&](std::string_view t) { return name == t; });
}

Node* producer_of(Value* v, std::string_view target) {
  if (v == nullptr) return nullptr;
  Node* n = v->producer();
  return n != nullptr && is_op(*n, target) ? n : nullptr;
}

NamedArgument named(std::string name, Argument value, bool kwarg_only) {
  return NamedArgument{std::move(name), std::move(value), kwarg_only};
}

Node* emit_multi(Graph& graph, Node* before, std::string_view target, std::vector<NamedArgument> args,
                 const std::vector<TensorMeta>& metas, const std::string& base) {
  const std::string node_name = graph.unique_name(base);
  std::vector<ir::OutputSpec> outputs;
  for (size_t i = 0; i < metas.size(); ++i) {
    ir::OutputSpec spec;
    spec.name = i == 0 ? node_name : graph.unique_name(node_name + "_" + std::to_string(i));
    spec.kind = ir::ValueKind::Tensor;
    spec.meta = metas[i];
    outputs.push_back(std::move(spec));
  }
  return graph.create_node(ir::OpName::parse(target), std::move(args), std::move(outputs), before, node_name);
}

Value* emit(Graph& graph, Node* before, std::string_view target, std::vector<NamedArgument> args, TensorMeta meta,
            const std::string& base) {
  return emit_multi(graph, before, target, std::move(args), {std::move(meta)}, base)->output(0);
}

Value* emit_sym(Graph& graph, Node* before, std::string_view target, std::vector<NamedArgument> args,
                std::optional<SymExpr> value, const std::string& base) {
  const std::string node_name = graph.unique_name(base);
  ir::OutputSpec spec;
  spec.name = node_name;
  spec.kind = ir::ValueKind::SymInt;
  Node* node = graph.create_node(ir::OpName::parse(target), std::move(args), {spec}, before, node_name);
  node->output(0)->set_sym_value(std::move(value));
  return node->output(0);
}

void replace_node(Graph& graph, Node* node, const std::vector<Value*>& replacements) {
  for (size_t i = 0; i < node->outputs().size(); ++i) {
    Value* replacement = i < replacements.size() ? replacements[i] : nullptr;
    if (replacement != nullptr) graph.replace_all_uses(node->output(i), replacement);
  }
  graph.erase_node(node);
}

size_t replace_uses_after(Graph& graph, Node* after, Value* from, Value* to) {
  size_t count = 0;
  bool seen = false;
  for (Node* node : graph.nodes()) {
    if (!seen) {
      seen = node == after;
      continue;
    }
    std::vector<NamedArgument> args = node->args();
    bool changed = false;
    for (NamedArgument& a : args) changed |= a.value.replace_value(from, to);
    if (changed) {
      node->set_args(std::move(args));
      ++count;
    }
  }
  std::vector<Value*> outputs = graph.outputs();
  for (Value*& v : outputs) {
    if (v == from) {
      v = to;
      ++count;
    }
  }
  graph.set_outputs(std::move(outputs));
  return count;
}

Value* tensor_arg(const Node& node, const std::string& name) {
  const Argument* a = node.find_arg(name);
  if (a == nullptr || a->is_none()) return nullptr;
  return a->as_tensor();
}

int64_t int_arg(const Node& node, const std::string& name, int64_t fallback) {
  const Argument* a = node.find_arg(name);
  return a == nullptr || a->is_none() ? fallback : a->as_int();
}

double float_arg(const Node& node, const std::string& name, double fallback) {
  const Argument* a = node.find_arg(name);
  return a == nullptr || a->is_none() ? fallback : a->as_float();
}

bool bool_arg(const Node& node, const std::string& name, bool fallback) {
  const Argument* a = node.find_arg(name);
  return a == nullptr || a->is_none() ? fallback : a->as_bool();
}

Value* tensor_arg_if_tensor(const Node& node, const std::string& name) {
  const Argument* a = node.find_arg(name);
  return a != nullptr && a->kind() == Argument::Kind::Tensor ? tensor_arg(node, name) : nullptr;
}

bool arg_is_none(const Node& node, const std::string& name) {
  const Argument* a = node.find_arg(name);
  return a == nullptr || a->is_none();
}

TensorMeta with_sizes(const TensorMeta& meta, std::vector<SymExpr> sizes) {
  TensorMeta out;
  out.dtype = meta.dtype;
  out.device = meta.device;
  out.sizes = std::move(sizes);
  return out;
}

TensorMeta with_dtype(const TensorMeta& meta, DType dtype) {
  TensorMeta out = with_sizes(meta, meta.sizes);
  out.dtype = dtype;
  return out;
}

int64_t normalize_dim(int64_t dim, int64_t rank, const Node& node) {
  const int64_t wrap = std::max<int64_t>(rank, 1);
  const int64_t d = dim < 0 ? dim + wrap : dim;
  KILN_CHECK(d >= 0 && d < wrap, InvalidInput, "dim ", dim, " out of range for rank ", rank, " at node '",
             node.name(), "' (", node.target().to_string(), ")");
  return d;
}

std::vector<SymExpr> broadcast_sizes(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<SymExpr> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const bool has_a = i < a.size();
    const bool has_b = i < b.size();
    const SymExpr& x = has_a ? a[a.size() - 1 - i] : b[b.size() - 1 - i];
    const SymExpr& y = has_b ? b[b.size() - 1 - i] : x;
    SymExpr r;
    if (x.as_int() == 1) {
      r = y;
    } else if (y.as_int() == 1 || x == y) {
      r = x;
    } else if (y.is_constant()) {
      r = y;  // a symbolic size broadcast against a constant other than 1 must be 1 or equal to it
    } else {
      r = x;
    }
    out[rank - 1 - i] = r;
  }
  return out;
}

std::vector<SymExpr> reduced_sizes(const std::vector<SymExpr>& sizes, const std::vector<int64_t>& dims,
                                   bool keepdim) {
  std::vector<SymExpr> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const bool reduced = std::find(dims.begin(), dims.end(), static_cast<int64_t>(i)) != dims.end();
    if (!reduced) {
      out.push_back(sizes[i]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

namespace {

// A SymInt value defined before `before` whose value is stated to equal `expr`.
Value* find_sym_value(Graph& graph, Node* before, const SymExpr& expr) {
  for (Value* input : graph.inputs()) {
    if (input->kind() == ir::ValueKind::SymInt && input->sym_value() && *input->sym_value() == expr) return input;
  }
  for (Node* node : graph.nodes()) {
    if (node == before) break;
    for (Value* out : node->outputs()) {
      if (out->kind() == ir::ValueKind::SymInt && out->sym_value() && *out->sym_value() == expr) return out;
    }
  }
  return nullptr;
}

}  // namespace

std::optional<std::vector<ir::SymIntArg>> size_args(Graph& graph, Node* before, Value* source,
                                                    const std::vector<SymExpr>& sizes) {
  std::vector<ir::SymIntArg> out;
  for (const SymExpr& size : sizes) {
    ir::SymIntArg arg;
    if (auto c = size.as_int()) {
      arg.constant = *c;
      out.push_back(arg);
      continue;
    }
    if (Value* existing = find_sym_value(graph, before, size)) {
      arg.value = existing;
      out.push_back(arg);
      continue;
    }
    bool found = false;
    if (source != nullptr && source->is_tensor()) {
      const auto& src_sizes = source->meta().sizes;
      for (size_t d = 0; d < src_sizes.size(); ++d) {
        if (src_sizes[d] == size) {
          arg.value = emit_sym(graph, before, "aten.sym_size.int",
                               {named("self", Argument::tensor(source)),
                                named("dim", Argument::int_(static_cast<int64_t>(d)))},
                               size, "sym_size_int");
          found = true;
          break;
        }
      }
    }
    if (!found) return std::nullopt;
    out.push_back(arg);
  }
  return out;
}

Argument sym_ints_argument(const std::vector<ir::SymIntArg>& args) {
  const bool all_constant =
      std::all_of(args.begin(), args.end(), [](const ir::SymIntArg& a) { return !a.is_value(); });
  if (!all_constant) return Argument::sym_ints(args);
  std::vector<int64_t> ints;
  for (const auto& a : args) ints.push_back(a.constant);
  return Argument::ints(std::move(ints));
}

std::vector<NamedArgument> to_copy_args(Value* self, std::optional<DType> dtype) {
  return {named("self", Argument::tensor(self)),
          named("dtype", dtype ? Argument::scalar_type(*dtype) : Argument::none(), true),
          named("layout", Argument::none(), true),
          named("device", Argument::none(), true),
          named("pin_memory", Argument::none(), true),
          named("non_blocking", Argument::bool_(false), true),
          named("memory_format", Argument::none(), true)};
}

Value* tensor_constant(Graph& graph, HostTensor data, const std::string& base) {
  const std::string name = graph.unique_name(base);
  TensorMeta meta = TensorMeta::make(data.dtype(), data.sizes());
  return graph.add_constant(name, name, ir::ConstantKind::Tensor, std::move(data), meta);
}

Value* scalar_constant(Graph& graph, DType dtype, double value, const std::string& base) {
  HostTensor data(dtype, {});
  data.set_from_double(0, value);
  return tensor_constant(graph, std::move(data), base);
}

void erase_if_dead_constant(Graph& graph, Value* value) {
  if (value == nullptr || value->role() != ir::ValueRole::Constant) return;
  if (graph.is_output(value) || !graph.users(value).empty()) return;
  graph.erase_value(value);
}

void erase_dead_producers(Graph& graph, std::vector<Value*> worklist,
                          std::initializer_list<std::string_view> targets) {
  while (!worklist.empty()) {
    Value* v = worklist.back();
    worklist.pop_back();
    // A value listed twice (an operand read twice) is erased once: drop the other entries before its producer
    // (and the value with it) goes.
    std::erase(worklist, v);
    Node* n = v->producer();
    if (n == nullptr || n->outputs().size() != 1 || graph.is_output(v) || !graph.users(v).empty() ||
        !is_op_any(*n, targets)) {
      continue;
    }
    for (Value* in : n->inputs()) worklist.push_back(in);
    graph.erase_node(n);
  }
}

bool is_random(const Node& node) {
  static const std::set<std::string> kRandom = {
      "aten.rand", "aten.randn", "aten.rand_like", "aten.randn_like", "aten.randint", "aten.randint_like",
      "aten.bernoulli", "aten.normal", "aten.uniform", "aten.multinomial", "aten.randperm",
      "aten.native_dropout", "aten.dropout", "aten.feature_dropout", "aten.alpha_dropout",
      "aten.feature_alpha_dropout", "aten.rrelu", "aten.exponential", "aten.empty", "aten.empty_like",
      "aten.empty_strided"};
  return kRandom.count(node.target().packet()) > 0;
}

bool has_side_effects(const Node& node) {
  const ir::OpName& op = node.target();
  if (node.subgraph() != nullptr) return true;
  const std::string& name = op.name;
  // In-place ops end in one underscore ("add_", "relu_"); dunder names ("__and__") are functional.
  if (name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_') return true;
  if (op.overload == "out") return true;
  static const std::set<std::string> kEffectful = {
      "_assert_tensor_metadata", "_assert_scalar", "_assert_async", "sym_constrain_range",
      "sym_constrain_range_for_size", "_functional_assert_async", "_functional_assert_scalar",
      "_functional_sym_constrain_range", "_functional_sym_constrain_range_for_size", "_print", "print",
      "record_stream", "_assert"};
  return kEffectful.count(name) > 0;
}

}  // namespace kiln::lowering::detail
