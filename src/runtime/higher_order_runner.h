#pragma once
// Runs higher-order op nodes (torch.ops.higher_order.*) in the torch executor: the control flow here, each
// nested graph through a TorchExecutor of its own. Internal to the runtime layer.
//
//   cond(pred, true_graph, false_graph, operands)           one branch, chosen by pred (tensor, SymBool or
//   bool) while_loop(cond_graph, body_graph, carried, additional) body while cond is true; returns the
//   carried values map_impl(body_graph, xs, pos_args)                      body on each slice xs[i] along dim
//   0; stacks results invoke_subgraph(graph, identifier, *operands)           the graph once
//   wrap_with_set_grad_enabled(enabled, graph, *operands)   the graph once (the frontend inlines these; this
//   wrap_with_autocast(device, dtype, enabled, cache, graph, *operands)  runs the ones it could not)

#include <memory>
#include <vector>

#include <ATen/core/ivalue.h>

#include "kiln/ir/graph.h"
#include "runtime/builtin_ops.h"

namespace kiln::runtime {

class HigherOrderRunner {
 public:
  virtual ~HigherOrderRunner() = default;
  /// The node's results in output order.
  virtual std::vector<c10::IValue> run(const NodeArgs& args) const = 0;
};

/// The runner for a higher-order node; its nested graphs' executors are built here, once. Throws
/// kiln::Error(Unsupported) for a higher-order op the runtime does not know, InvalidInput for a malformed
/// node.
std::shared_ptr<const HigherOrderRunner> make_higher_order_runner(const ir::Node& node,
                                                                  c10::optional<c10::Device> device);

}  // namespace kiln::runtime
