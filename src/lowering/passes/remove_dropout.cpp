// Removes inactive dropout: every dropout form is the identity when train=False or p=0.

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

bool run_remove_dropout(ir::Graph& graph, const PassContext& /*context*/) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    const bool single = detail::is_op_any(
        *node, {"aten.dropout.default", "aten.feature_dropout.default", "aten.alpha_dropout.default",
                "aten.feature_alpha_dropout.default"});
    const bool native = detail::is_op(*node, "aten.native_dropout.default");
    if (!single && !native) continue;
    const bool train = detail::bool_arg(*node, "train", true);
    const double p = detail::float_arg(*node, "p", 0.5);
    // Active dropout (train=True, p > 0) zeroes random elements as the program asks, even for an inference
    // compile: it stays, and runs in PyTorch (no converter).
    if (train && p != 0.0) continue;
    ir::Value* input = detail::tensor_arg(*node, "input");
    if (input == nullptr) continue;
    if (native) {
      // native_dropout also returns the keep-mask; replace it only when nothing reads it.
      ir::Value* mask = node->outputs().size() > 1 ? node->output(1) : nullptr;
      if (mask != nullptr && (graph.is_output(mask) || !graph.users(mask).empty())) continue;
    }
    detail::replace_node(graph, node, {input});
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_remove_dropout_pass() {
  return std::make_shared<FunctionPass>("remove_dropout", "Removes inactive dropout (train=False or p=0), the identity.",
                                        run_remove_dropout);
}

}  // namespace kiln::lowering
