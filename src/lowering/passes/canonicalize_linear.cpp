// Turns Core ATen's form of a linear layer back into aten.linear, so that programs exported as training IR
// (which keep aten.linear) and as Core ATen reach the same canonical graph:
//   addmm(bias, x, permute(W, [1, 0]), beta=1, alpha=1)  ->  linear(x, W, bias)
//   mm(x, permute(W, [1, 0]))                           ->  linear(x, W, None)
// and, for inputs of rank > 2, the reshapes Core ATen wraps around the matrix product:
//   reshape(addmm(b, reshape(x, [M, K]), permute(W)), [d0, .., dn-2, N])  ->  linear(x, W, b)
// when x is [d0, .., dn-2, K]. W must be a constant (a parameter, buffer or tensor constant): that is the
// layer the engine's fused linear takes; a product with a transposed activation stays a matrix product.
// A constant weight used as it is ([K, N], GPT-2's Conv1D) becomes a matrix product and a bias add, with the
// same reshapes removed, so that what follows the layer (its activation, the residual add) meets the product
// itself and fuses into it:
//   reshape(addmm(b, reshape(x, [M, K]), W), [d0, .., dn-2, N])  ->  add(matmul(x, W), b)

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

// Whether the argument `name` is absent or the number 1 (a symbolic scale is not matched).
bool is_unit_scale(const ir::Node& node, const std::string& name) {
  const ir::Argument* a = node.find_arg(name);
  if (a == nullptr || a->is_none()) return true;
  if (a->kind() != ir::Argument::Kind::Int && a->kind() != ir::Argument::Kind::Float) return false;
  return a->as_float() == 1.0;
}

// `value` when it is a rank-2 constant; else nullptr.
ir::Value* plain_constant(ir::Value* value) {
  return value->role() == ir::ValueRole::Constant && value->meta().rank() == 2 ? value : nullptr;
}

// W when `value` is permute(W, [1, 0]) of a rank-2 constant W; else nullptr.
ir::Value* transposed_constant(ir::Value* value) {
  ir::Node* permute = value->producer();
  if (permute == nullptr || !detail::is_op(*permute, "aten.permute.default")) return nullptr;
  ir::Value* weight = detail::tensor_arg(*permute, "self");
  if (weight == nullptr || weight->role() != ir::ValueRole::Constant || weight->meta().rank() != 2) return nullptr;
  const ir::Argument* dims = permute->find_arg("dims");
  if (dims == nullptr || dims->kind() != ir::Argument::Kind::Ints) return nullptr;
  const std::vector<int64_t> order = dims->as_ints();
  const bool swapped = order.size() == 2 && (order[0] == 1 || order[0] == -1) && (order[1] == 0 || order[1] == -2);
  return swapped ? weight : nullptr;
}

// x when `mat1` is reshape(x, [M, K]) with x of rank > 2 and the same last dim K; else nullptr.
ir::Value* flattened_input(ir::Value* mat1) {
  ir::Node* reshape = mat1->producer();
  if (reshape == nullptr || !detail::is_op_any(*reshape, {"aten.reshape.default", "aten.view.default"})) {
    return nullptr;
  }
  ir::Value* x = detail::tensor_arg(*reshape, "self");
  if (x == nullptr || x->meta().rank() <= 2 || mat1->meta().rank() != 2) return nullptr;
  return x->meta().sizes.back() == mat1->meta().sizes.back() ? x : nullptr;
}

// The single reshape reading `product` when it restores x's leading dims with the product's last dim N.
ir::Node* unflattening_reshape(const ir::Graph& graph, ir::Value* product, ir::Value* x) {
  if (graph.is_output(product)) return nullptr;
  const auto users = graph.users(product);
  if (users.size() != 1) return nullptr;
  ir::Node* reshape = users[0];
  if (!detail::is_op_any(*reshape, {"aten.reshape.default", "aten.view.default"}) ||
      detail::tensor_arg(*reshape, "self") != product) {
    return nullptr;
  }
  const auto& out = reshape->output(0)->meta().sizes;
  const auto& in = x->meta().sizes;
  if (out.size() != in.size()) return nullptr;
  for (size_t i = 0; i + 1 < in.size(); ++i) {
    if (!(out[i] == in[i])) return nullptr;
  }
  return out.back() == product->meta().sizes.back() ? reshape : nullptr;
}

// Erases the node producing `value` when nothing reads its only output.
void erase_if_unused(ir::Graph& graph, ir::Value* value) {
  ir::Node* producer = value->producer();
  if (producer == nullptr || producer->outputs().size() != 1 || graph.is_output(value) ||
      !graph.users(value).empty()) {
    return;
  }
  graph.erase_node(producer);
}

bool canonicalize_one(ir::Graph& graph, ir::Node* node) {
  const bool addmm = detail::is_op(*node, "aten.addmm.default");
  if (!addmm && !detail::is_op(*node, "aten.mm.default")) return false;
  ir::Value* mat1 = detail::tensor_arg(*node, addmm ? "mat1" : "self");
  ir::Value* mat2 = detail::tensor_arg(*node, "mat2");
  if (mat1 == nullptr || mat2 == nullptr) return false;
  ir::Value* weight = transposed_constant(mat2);
  const bool transposed = weight != nullptr;
  if (!transposed) weight = plain_constant(mat2);
  if (weight == nullptr) return false;
  const auto& out_features = weight->meta().sizes[transposed ? 0 : 1];
  ir::Value* bias = nullptr;
  if (addmm) {
    bias = detail::tensor_arg(*node, "self");
    // linear adds a bias of shape [N] to every row; addmm's self may be any broadcastable shape.
    if (bias == nullptr || !is_unit_scale(*node, "beta") || !is_unit_scale(*node, "alpha") ||
        bias->meta().rank() != 1 || !(bias->meta().sizes[0] == out_features) ||
        bias->meta().dtype != node->output(0)->meta().dtype) {
      return false;
    }
  }
  ir::Value* product = node->output(0);
  ir::Value* input = mat1;
  ir::Node* replaced = node;
  if (ir::Value* x = flattened_input(mat1)) {
    if (ir::Node* reshape = unflattening_reshape(graph, product, x)) {
      input = x;
      replaced = reshape;
    }
  }
  const ir::TensorMeta& meta = replaced->output(0)->meta();
  ir::Value* result = nullptr;
  if (transposed) {
    std::vector<ir::NamedArgument> args = {
        detail::named("input", ir::Argument::tensor(input)), detail::named("weight", ir::Argument::tensor(weight)),
        detail::named("bias", bias ? ir::Argument::tensor(bias) : ir::Argument::none())};
    result = detail::emit(graph, replaced, "aten.linear.default", std::move(args), meta, "linear");
  } else {
    result = detail::emit(graph, replaced, "aten.matmul.default",
                          {detail::named("self", ir::Argument::tensor(input)),
                           detail::named("other", ir::Argument::tensor(weight))},
                          meta, "matmul");
    if (bias != nullptr) {
      result = detail::emit(graph, replaced, "aten.add.Tensor",
                            {detail::named("self", ir::Argument::tensor(result)),
                             detail::named("other", ir::Argument::tensor(bias)),
                             detail::named("alpha", ir::Argument::int_(1), true)},
                            meta, "add");
    }
  }
  detail::replace_node(graph, replaced, {result});
  if (replaced != node) detail::replace_node(graph, node, {nullptr});
  // The permute and the flattening reshape are dead now unless something else reads them.
  if (transposed) erase_if_unused(graph, mat2);
  if (input != mat1) erase_if_unused(graph, mat1);
  return true;
}

bool run_canonicalize_linear(ir::Graph& graph, const PassContext&) {
  // A rewrite may erase nodes after the current one (the unflattening reshape), so the node list is taken
  // afresh after each rewrite.
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (ir::Node* node : graph.nodes()) {
      if (canonicalize_one(graph, node)) {
        changed = again = true;
        break;
      }
    }
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_canonicalize_linear_pass() {
  return std::make_shared<FunctionPass>(
      "canonicalize_linear",
      "Rewrites addmm/mm with a transposed constant weight (Core ATen's linear) back into aten.linear, and with a "
      "constant weight used as it is (GPT-2's Conv1D) into matmul and a bias add, without the flattening reshapes.",
      run_canonicalize_linear);
}

}  // namespace kiln::lowering
