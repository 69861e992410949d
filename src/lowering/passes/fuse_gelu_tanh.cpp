// Rewrites the tanh approximation of GELU written out in arithmetic into aten.gelu(approximate='tanh'):
//   mul(mul(x, 0.5), add(tanh(mul(add(x, mul(pow(x, 3), 0.044715)), sqrt(2/pi))), 1))  ->  gelu(x, 'tanh')
// (GPT-2's NewGELUActivation / gelu_new; either operand order of each add and mul). The engine fuses a gelu
// into the matrix multiply before it (oneDNN's gelu_tanh post-op), where the written-out form ran as two
// pointwise passes over the [tokens, 4 * hidden] activation. Other forms (x * x * x for the cube, other
// constants) stay as they are; the nodes of the formula left without users go with the cleanup passes.

#include <cmath>
#include <numbers>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

// Whether `node`'s argument `name` is a number within 1e-6 (relative) of `value`.
bool number_near(const ir::Node& node, const std::string& name, double value) {
  const ir::Argument* a = node.find_arg(name);
  if (a == nullptr || (a->kind() != ir::Argument::Kind::Float && a->kind() != ir::Argument::Kind::Int))
    return false;
  return std::fabs(a->as_float() - value) <= 1e-6 * std::fabs(value);
}

// Whether `node` is no aten.add.Tensor or one with alpha absent, None or 1.
bool unit_alpha(const ir::Node& node) {
  if (!detail::is_op(node, "aten.add.Tensor") || detail::arg_is_none(node, "alpha")) return true;
  return number_near(node, "alpha", 1.0);
}

// The tensor operand of binary `node` (aten.mul.Tensor / aten.add.Tensor with alpha 1) whose other operand
// is the number `value`; else nullptr.
ir::Value* operand_times_or_plus(ir::Node* node, double value) {
  if (node == nullptr || !number_near(*node, "other", value) || !unit_alpha(*node)) return nullptr;
  return detail::tensor_arg_if_tensor(*node, "self");
}

// The two tensor operands of `node` (aten.add.Tensor with alpha 1, or aten.mul.Tensor); false otherwise.
bool tensor_operands(const ir::Node& node, ir::Value** a, ir::Value** b) {
  if (!unit_alpha(node)) return false;
  *a = detail::tensor_arg_if_tensor(node, "self");
  *b = detail::tensor_arg_if_tensor(node, "other");
  return *a != nullptr && *b != nullptr;
}

// x when `v` is x + 0.044715 * x^3 (pow(x, 3) scaled, added to x in either order); else nullptr.
ir::Value* cubic_argument(ir::Value* v) {
  ir::Node* add = detail::producer_of(v, "aten.add.Tensor");
  ir::Value *a = nullptr, *b = nullptr;
  if (add == nullptr || !tensor_operands(*add, &a, &b)) return nullptr;
  for (int order = 0; order < 2; ++order, std::swap(a, b)) {
    ir::Value* cube = operand_times_or_plus(detail::producer_of(b, "aten.mul.Tensor"), 0.044715);
    ir::Node* pow = detail::producer_of(cube, "aten.pow.Tensor_Scalar");
    if (pow != nullptr && number_near(*pow, "exponent", 3.0) &&
        detail::tensor_arg_if_tensor(*pow, "self") == a)
      return a;
  }
  return nullptr;
}

// x when `v` is 1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)); else nullptr.
ir::Value* tanh_term_argument(ir::Value* v) {
  ir::Node* tanh = detail::producer_of(operand_times_or_plus(detail::producer_of(v, "aten.add.Tensor"), 1.0),
                                       "aten.tanh.default");
  if (tanh == nullptr) return nullptr;
  return cubic_argument(operand_times_or_plus(
      detail::producer_of(detail::tensor_arg_if_tensor(*tanh, "self"), "aten.mul.Tensor"),
      std::sqrt(2.0 / std::numbers::pi)));
}

// x when `node` computes gelu(x, 'tanh') as written out above; else nullptr.
ir::Value* gelu_tanh_argument(const ir::Node& node) {
  ir::Value *a = nullptr, *b = nullptr;
  if (!detail::is_op(node, "aten.mul.Tensor") || !tensor_operands(node, &a, &b)) return nullptr;
  for (int order = 0; order < 2; ++order, std::swap(a, b)) {
    ir::Value* x = operand_times_or_plus(detail::producer_of(a, "aten.mul.Tensor"), 0.5);
    if (x != nullptr && tanh_term_argument(b) == x) return x;
  }
  return nullptr;
}

bool run_fuse_gelu_tanh(ir::Graph& graph, const PassContext&) {
  // Each rewrite erases nodes, so the node list is taken afresh after each one.
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (ir::Node* node : graph.nodes()) {
      ir::Value* x = gelu_tanh_argument(*node);
      if (x == nullptr || !is_floating(x->meta().dtype)) continue;
      ir::Value* gelu = detail::emit(graph, node, "aten.gelu.default",
                                     {detail::named("self", ir::Argument::tensor(x)),
                                      detail::named("approximate", ir::Argument::string("tanh"), true)},
                                     node->output(0)->meta(), "gelu");
      std::vector<ir::Value*> operands = node->inputs();
      detail::replace_node(graph, node, {gelu});
      detail::erase_dead_producers(
          graph, std::move(operands),
          {"aten.mul.Tensor", "aten.add.Tensor", "aten.pow.Tensor_Scalar", "aten.tanh.default"});
      changed = again = true;
      break;
    }
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_fuse_gelu_tanh_pass() {
  return std::make_shared<FunctionPass>("fuse_gelu_tanh",
                                        "Rewrites GELU's tanh approximation written out in arithmetic "
                                        "(GPT-2's gelu_new) into aten.gelu(approximate='tanh').",
                                        run_fuse_gelu_tanh);
}

}  // namespace kiln::lowering
