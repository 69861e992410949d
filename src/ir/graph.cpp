// Graph, Node and UseMap.

#include "kiln/ir/graph.h"

#include <algorithm>
#include <queue>
#include <unordered_set>

#include "kiln/support/error.h"

namespace kiln::ir {

const char* to_string(ValueKind kind) {
  switch (kind) {
    case ValueKind::Tensor: return "Tensor";
    case ValueKind::SymInt: return "SymInt";
    case ValueKind::SymFloat: return "SymFloat";
    case ValueKind::SymBool: return "SymBool";
    case ValueKind::Opaque: return "Opaque";
  }
  return "Unknown";
}

const char* to_string(ConstantKind kind) {
  switch (kind) {
    case ConstantKind::Parameter: return "Parameter";
    case ConstantKind::Buffer: return "Buffer";
    case ConstantKind::Tensor: return "Tensor";
  }
  return "Unknown";
}

// --- Node ---------------------------------------------------------------------------------------------

const Argument* Node::find_arg(const std::string& name) const {
  for (const auto& a : args_) {
    if (a.name == name) return &a.value;
  }
  return nullptr;
}

const Argument& Node::arg(const std::string& name) const {
  const Argument* a = find_arg(name);
  if (!a) {
    throw Error(ErrorKind::InvalidInput, "node has no argument '" + name + "'",
                ErrorContext{"", name_, target_.to_string(), ""});
  }
  return *a;
}

const Argument& Node::arg(size_t index) const {
  if (index >= args_.size()) {
    throw Error(
        ErrorKind::InvalidInput,
        detail::concat("argument index ", index, " out of range (node has ", args_.size(), " arguments)"),
        ErrorContext{"", name_, target_.to_string(), ""});
  }
  return args_[index].value;
}

void Node::set_arg(const std::string& name, Argument value, bool kwarg_only) {
  for (auto& a : args_) {
    if (a.name == name) {
      a.value = std::move(value);
      a.kwarg_only = kwarg_only;
      return;
    }
  }
  args_.push_back(NamedArgument{name, std::move(value), kwarg_only});
}

void Node::remove_arg(const std::string& name) {
  args_.erase(
      std::remove_if(args_.begin(), args_.end(), [&](const NamedArgument& a) { return a.name == name; }),
      args_.end());
}

Value* Node::output(size_t i) const {
  if (i >= outputs_.size()) {
    throw Error(ErrorKind::InvalidInput,
                detail::concat("output index ", i, " out of range (node has ", outputs_.size(), " outputs)"),
                ErrorContext{"", name_, target_.to_string(), ""});
  }
  return outputs_[i];
}

std::vector<Value*> Node::inputs() const {
  std::vector<Value*> out;
  std::unordered_set<Value*> seen;
  for (const auto& a : args_) {
    for (Value* v : a.value.values()) {
      if (seen.insert(v).second) out.push_back(v);
    }
  }
  return out;
}

// --- Graph --------------------------------------------------------------------------------------------

Value* Graph::new_value(const std::string& name) {
  KILN_CHECK(!name.empty(), InvalidInput, "empty value name");
  KILN_CHECK(values_.find(name) == values_.end(), InvalidInput, "duplicate value name '", name, "'");
  auto v = std::make_unique<Value>();
  v->name_ = name;
  Value* raw = v.get();
  values_.emplace(name, std::move(v));
  return raw;
}

std::list<std::unique_ptr<Node>>::iterator Graph::position(const Node* node) const {
  auto it = node_positions_.find(node);
  KILN_CHECK(it != node_positions_.end(), Internal, "node '", node ? node->name() : std::string("<null>"),
             "' does not belong to this graph");
  return it->second;
}

Value* Graph::add_input(const std::string& name, ValueKind kind, TensorMeta meta) {
  Value* v = new_value(name);
  v->kind_ = kind;
  v->role_ = ValueRole::Input;
  v->meta_ = std::move(meta);
  inputs_.push_back(v);
  return v;
}

Value* Graph::add_constant(const std::string& name, const std::string& fqn, ConstantKind kind,
                           HostTensor data, TensorMeta meta) {
  Value* v = new_value(name);
  v->kind_ = ValueKind::Tensor;
  v->role_ = ValueRole::Constant;
  v->fqn_ = fqn;
  v->constant_kind_ = kind;
  if (data.defined()) {
    TensorMeta m = TensorMeta::make(data.dtype(), data.sizes());
    m.device = meta.device;
    meta = std::move(m);
  }
  v->meta_ = std::move(meta);
  v->data_ = std::move(data);
  constants_.push_back(v);
  return v;
}

std::string Graph::unique_name(const std::string& base_in) const {
  std::string base = base_in.empty() ? "v" : base_in;
  auto used = [&](const std::string& n) { return values_.count(n) != 0 || node_names_.count(n) != 0; };
  if (!used(base)) return base;
  for (size_t i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!used(n)) return n;
  }
}

Node* Graph::create_node(OpName target, std::vector<NamedArgument> args, std::vector<OutputSpec> outputs,
                         Node* before, const std::string& name) {
  std::string node_name = name;
  if (node_name.empty()) {
    if (!outputs.empty() && !outputs[0].name.empty() && node_names_.count(outputs[0].name) == 0) {
      node_name = outputs[0].name;
    } else {
      node_name = unique_name(target.name);
    }
  }
  KILN_CHECK(node_names_.count(node_name) == 0, InvalidInput, "duplicate node name '", node_name, "'");
  // Check every output name before creating anything, so a failure leaves the graph unchanged.
  std::unordered_set<std::string> fresh;
  for (const auto& spec : outputs) {
    if (spec.name.empty()) continue;
    KILN_CHECK(values_.count(spec.name) == 0 && fresh.insert(spec.name).second, InvalidInput,
               "duplicate value name '", spec.name, "' (output of node '", node_name, "')");
  }
  auto iter = before ? position(before) : nodes_.end();
  auto node = std::make_unique<Node>();
  node->name_ = node_name;
  node->target_ = std::move(target);
  node->owner_ = this;
  node->args_ = std::move(args);
  Node* raw = node.get();
  auto it = nodes_.insert(iter, std::move(node));
  node_positions_[raw] = it;
  node_names_[node_name] = raw;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string out_name = outputs[i].name;
    if (out_name.empty()) {
      // Reserve every explicitly named output first: a derived name must not take one of them.
      std::string candidate = unique_name(node_name);
      for (size_t k = 1; fresh.count(candidate); ++k)
        candidate = unique_name(node_name + "_" + std::to_string(k));
      out_name = candidate;
    }
    Value* v = new_value(out_name);
    v->kind_ = outputs[i].kind;
    v->role_ = ValueRole::NodeOutput;
    v->meta_ = std::move(outputs[i].meta);
    v->producer_ = raw;
    v->output_index_ = i;
    raw->outputs_.push_back(v);
  }
  return raw;
}

void Graph::erase_node(Node* node) {
  auto it = position(node);
  for (Value* out : node->outputs_) {
    KILN_CHECK(!is_output(out), Internal, "cannot erase node '", node->name(), "': its output '", out->name(),
               "' is a graph output");
    auto us = users(out);
    KILN_CHECK(us.empty(), Internal, "cannot erase node '", node->name(), "': its output '", out->name(),
               "' is still used by node '", us.empty() ? "" : us[0]->name(), "'");
  }
  for (Value* out : node->outputs_) values_.erase(out->name());
  node_names_.erase(node->name());
  node_positions_.erase(node);
  nodes_.erase(it);
}

void Graph::erase_value(Value* value) {
  KILN_CHECK(value != nullptr, Internal, "erase_value given a null value");
  auto found = values_.find(value->name());
  KILN_CHECK(found != values_.end() && found->second.get() == value, Internal, "value '", value->name(),
             "' does not belong to this graph");
  KILN_CHECK(value->role() != ValueRole::NodeOutput, Internal, "cannot erase value '", value->name(),
             "': it is a node output (erase its node instead)");
  KILN_CHECK(!is_output(value), Internal, "cannot erase value '", value->name(), "': it is a graph output");
  auto us = users(value);
  KILN_CHECK(us.empty(), Internal, "cannot erase value '", value->name(), "': it is still used by node '",
             us.empty() ? "" : us[0]->name(), "'");
  auto& list = value->role() == ValueRole::Input ? inputs_ : constants_;
  list.erase(std::remove(list.begin(), list.end(), value), list.end());
  values_.erase(found);
}

size_t Graph::replace_all_uses(Value* from, Value* to) {
  KILN_CHECK(from != nullptr && to != nullptr, Internal, "replace_all_uses given a null value");
  if (from == to) return 0;
  size_t count = 0;
  for (auto& node : nodes_) {
    for (auto& a : node->args_) {
      for (Value* v : a.value.values()) count += v == from ? 1 : 0;
      a.value.replace_value(from, to);
    }
  }
  for (Value*& v : outputs_) {
    if (v == from) {
      v = to;
      ++count;
    }
  }
  return count;
}

void Graph::move_before(Node* node, Node* before) {
  if (node == before) return;
  auto it = position(node);
  auto dest = before ? position(before) : nodes_.end();
  nodes_.splice(dest, nodes_, it);
}

void Graph::topological_sort() {
  std::vector<Node*> order = nodes();
  std::unordered_map<const Node*, size_t> index;
  for (size_t i = 0; i < order.size(); ++i) index[order[i]] = i;
  std::vector<size_t> pending(order.size(), 0);
  std::vector<std::vector<size_t>> consumers(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    std::unordered_set<const Node*> deps;
    for (Value* v : order[i]->inputs()) {
      Node* p = v->producer();
      if (p && p->owner() == this && p != order[i] && deps.insert(p).second) {
        consumers[index.at(p)].push_back(i);
        ++pending[i];
      }
      KILN_CHECK(p != order[i], InvalidInput, "node '", order[i]->name(), "' reads its own output '",
                 v->name(), "' (cycle)");
    }
  }
  // Kahn's algorithm, always taking the earliest ready node, so an already sorted graph keeps its order.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < order.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<size_t> sorted;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    sorted.push_back(i);
    for (size_t c : consumers[i]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (sorted.size() != order.size()) {
    for (size_t i = 0; i < order.size(); ++i) {
      KILN_CHECK(pending[i] == 0, InvalidInput, "graph has a cycle through node '", order[i]->name(), "'");
    }
  }
  for (size_t i : sorted) move_before(order[i], nullptr);
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : it->second.get();
}

Node* Graph::find_node(const std::string& name) const {
  auto it = node_names_.find(name);
  return it == node_names_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::users(const Value* value) const {
  std::vector<Node*> out;
  for (const auto& n : nodes_) {
    bool uses = false;
    for (const auto& a : n->args_) {
      for (Value* v : a.value.values()) uses |= v == value;
    }
    if (uses) out.push_back(n.get());
  }
  return out;
}

bool Graph::is_output(const Value* value) const {
  return std::find(outputs_.begin(), outputs_.end(), value) != outputs_.end();
}

size_t Graph::index_of(const Node* node) const {
  size_t i = 0;
  for (const auto& n : nodes_) {
    if (n.get() == node) return i;
    ++i;
  }
  KILN_FAIL(Internal, "node '", node ? node->name() : std::string("<null>"),
            "' does not belong to this graph");
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>();
  std::unordered_map<const Value*, Value*> map;
  auto copy_value_fields = [](const Value* from, Value* to) {
    to->meta_ = from->meta_;
    to->sym_value_ = from->sym_value_;
  };
  for (Value* v : inputs_) {
    Value* n = g->add_input(v->name(), v->kind(), v->meta());
    copy_value_fields(v, n);
    map[v] = n;
  }
  for (Value* v : constants_) {
    Value* n = g->add_constant(v->name(), v->fqn(), v->constant_kind(), v->data(), v->meta());
    copy_value_fields(v, n);
    map[v] = n;
  }
  // Node outputs are created first so that arguments can refer to any value (even out of order).
  std::vector<std::pair<const Node*, Node*>> pairs;
  for (const auto& node : nodes_) {
    std::vector<OutputSpec> specs;
    for (Value* out : node->outputs_) specs.push_back(OutputSpec{out->name(), out->kind(), out->meta()});
    Node* n = g->create_node(node->target_, {}, std::move(specs), nullptr, node->name_);
    for (size_t i = 0; i < node->outputs_.size(); ++i) {
      copy_value_fields(node->outputs_[i], n->outputs_[i]);
      map[node->outputs_[i]] = n->outputs_[i];
    }
    n->metadata_ = node->metadata_;
    if (node->subgraph_) n->subgraph_ = std::shared_ptr<Graph>(node->subgraph_->clone());
    pairs.emplace_back(node.get(), n);
  }
  auto remap = [&](Value* v) -> Value* {
    if (!v) return nullptr;
    auto it = map.find(v);
    KILN_CHECK(it != map.end(), Internal, "clone: value '", v->name(), "' does not belong to the graph");
    return it->second;
  };
  for (auto& [old_node, n] : pairs) {
    std::vector<NamedArgument> args = old_node->args_;
    for (auto& a : args) {
      for (Value* v : a.value.values()) a.value.replace_value(v, remap(v));
    }
    n->args_ = std::move(args);
  }
  std::vector<Value*> outs;
  for (Value* v : outputs_) outs.push_back(remap(v));
  g->outputs_ = std::move(outs);
  g->symbol_ranges_ = symbol_ranges_;
  g->symbol_hints_ = symbol_hints_;
  return g;
}

// --- UseMap -------------------------------------------------------------------------------------------

UseMap::UseMap(const Graph& graph) {
  for (Node* n : graph.nodes()) {
    for (Value* v : n->inputs()) users_[v].push_back(n);
  }
}

const std::vector<Node*>& UseMap::users(const Value* value) const {
  auto it = users_.find(value);
  return it == users_.end() ? empty_ : it->second;
}

}  // namespace kiln::ir
