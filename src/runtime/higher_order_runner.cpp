#include "runtime/higher_order_runner.h"

#include <ATen/ATen.h>

#include "kiln/ir/higher_order.h"
#include "kiln/runtime/torch_executor.h"
#include "kiln/support/error.h"

namespace kiln::runtime {
namespace {

// Appends the runtime value of argument `index`, a list flattened into its items (HOP operands are flat).
void append_values(const NodeArgs& args, size_t index, std::vector<c10::IValue>& out) {
  c10::IValue v = args.value(index);
  if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorVector()) out.emplace_back(t);
  } else if (v.isList()) {
    for (const c10::IValue& item : v.toListRef()) out.push_back(item);
  } else if (!v.isNone()) {
    out.push_back(std::move(v));
  }
}

std::vector<c10::IValue> values_of_arg(const NodeArgs& args, size_t index) {
  std::vector<c10::IValue> out;
  append_values(args, index, out);
  return out;
}

// Every argument from position `first` on, flattened.
std::vector<c10::IValue> flat_values(const NodeArgs& args, size_t first) {
  std::vector<c10::IValue> out;
  for (size_t i = first; i < args.size(); ++i) append_values(args, i, out);
  return out;
}

bool truth(const c10::IValue& v, const ir::Node& node) {
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt() != 0;
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    KILN_CHECK(t.numel() == 1, InvalidInput, "node '", node.name(), "': the predicate has ", t.numel(),
               " elements, expected one");
    return t.item<double>() != 0.0;
  }
  KILN_FAIL(InvalidInput, "node '", node.name(), "': the predicate is a ", v.tagKind(), ", expected a bool");
}

// Index of the argument holding the node's k-th nested graph.
size_t graph_position(const ir::Node& node, size_t k) {
  size_t seen = 0;
  for (size_t i = 0; i < node.args().size(); ++i) {
    if (node.args()[i].value.kind() != ir::Argument::Kind::Graph) continue;
    if (seen++ == k) return i;
  }
  KILN_FAIL(InvalidInput, "node '", node.name(), "' (", node.target().to_string(), ") has ", seen,
            " nested graphs, expected at least ", k + 1);
}

class GraphRunner {
 public:
  GraphRunner(const ir::Node& node, size_t k, c10::optional<c10::Device> device)
      : graph_(node.args()[graph_position(node, k)].value.as_graph()), executor_(*graph_, device) {}
  std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs) const { return executor_.run(inputs); }
  size_t num_inputs() const { return graph_->inputs().size(); }

 private:
  std::shared_ptr<const ir::Graph> graph_;  // kept alive for the executor
  TorchExecutor executor_;
};

class Cond final : public HigherOrderRunner {
 public:
  Cond(const ir::Node& node, c10::optional<c10::Device> device)
      : node_(node),
        on_true_(node, 0, device),
        on_false_(node, 1, device),
        operands_(graph_position(node, 1) + 1) {}
  std::vector<c10::IValue> run(const NodeArgs& args) const override {
    bool pred = truth(args.value(0), node_);
    return (pred ? on_true_ : on_false_).run(flat_values(args, operands_));
  }

 private:
  const ir::Node& node_;
  GraphRunner on_true_, on_false_;
  size_t operands_;
};

class WhileLoop final : public HigherOrderRunner {
 public:
  WhileLoop(const ir::Node& node, c10::optional<c10::Device> device)
      : node_(node), cond_(node, 0, device), body_(node, 1, device), carried_(graph_position(node, 1) + 1) {}
  std::vector<c10::IValue> run(const NodeArgs& args) const override {
    std::vector<c10::IValue> carried = values_of_arg(args, carried_);
    std::vector<c10::IValue> additional = flat_values(args, carried_ + 1);
    while (true) {
      std::vector<c10::IValue> inputs = carried;
      inputs.insert(inputs.end(), additional.begin(), additional.end());
      std::vector<c10::IValue> c = cond_.run(inputs);
      KILN_CHECK(c.size() == 1, InvalidInput, "node '", node_.name(), "': the loop condition returned ",
                 c.size(), " values, expected one");
      if (!truth(c[0], node_)) return carried;
      std::vector<c10::IValue> next = body_.run(inputs);
      KILN_CHECK(next.size() == carried.size(), InvalidInput, "node '", node_.name(),
                 "': the loop body returned ", next.size(), " values for ", carried.size(),
                 " carried values");
      carried = std::move(next);
    }
  }

 private:
  const ir::Node& node_;
  GraphRunner cond_, body_;
  size_t carried_;
};

class Map final : public HigherOrderRunner {
 public:
  Map(const ir::Node& node, c10::optional<c10::Device> device)
      : node_(node), body_(node, 0, device), xs_(graph_position(node, 0) + 1) {}
  std::vector<c10::IValue> run(const NodeArgs& args) const override {
    std::vector<c10::IValue> xs = values_of_arg(args, xs_);
    std::vector<c10::IValue> rest = flat_values(args, xs_ + 1);
    KILN_CHECK(!xs.empty() && xs[0].isTensor(), InvalidInput, "node '", node_.name(),
               "': map over no tensors");
    const int64_t n = xs[0].toTensor().size(0);
    std::vector<std::vector<at::Tensor>> per_output;
    for (int64_t i = 0; i < n; ++i) {
      std::vector<c10::IValue> inputs;
      for (const c10::IValue& x : xs) inputs.emplace_back(x.toTensor().select(0, i));
      inputs.insert(inputs.end(), rest.begin(), rest.end());
      std::vector<c10::IValue> outs = body_.run(inputs);
      if (per_output.empty()) per_output.resize(outs.size());
      for (size_t k = 0; k < outs.size(); ++k) per_output[k].push_back(outs[k].toTensor());
    }
    KILN_CHECK(n > 0, Unsupported, "node '", node_.name(), "': map over an empty dimension");
    std::vector<c10::IValue> results;
    for (const auto& slices : per_output) results.emplace_back(at::stack(slices));
    return results;
  }

 private:
  const ir::Node& node_;
  GraphRunner body_;
  size_t xs_;
};

// invoke_subgraph and the region wrappers: the one nested graph on every argument after it.
class Once final : public HigherOrderRunner {
 public:
  Once(const ir::Node& node, c10::optional<c10::Device> device)
      : body_(node, 0, device), operands_(graph_position(node, 0) + 1) {
    // invoke_subgraph(subgraph, identifier, *operands): the identifier is a string, not an operand.
    if (node.target().name == "invoke_subgraph" && operands_ < node.args().size() &&
        node.args()[operands_].value.kind() == ir::Argument::Kind::String) {
      ++operands_;
    }
  }
  std::vector<c10::IValue> run(const NodeArgs& args) const override {
    return body_.run(flat_values(args, operands_));
  }

 private:
  GraphRunner body_;
  size_t operands_;
};

}  // namespace

std::shared_ptr<const HigherOrderRunner> make_higher_order_runner(const ir::Node& node,
                                                                  c10::optional<c10::Device> device) {
  const std::string& name = node.target().name;
  if (name == "cond") return std::make_shared<Cond>(node, device);
  if (name == "while_loop") return std::make_shared<WhileLoop>(node, device);
  if (name == "map_impl") return std::make_shared<Map>(node, device);
  if (name == "invoke_subgraph" || name == "wrap_with_set_grad_enabled" || name == "wrap_with_autocast") {
    return std::make_shared<Once>(node, device);
  }
  KILN_FAIL(Unsupported, "higher-order op '", node.target().to_string(), "' cannot run in Kiln's runtime");
}

}  // namespace kiln::runtime
