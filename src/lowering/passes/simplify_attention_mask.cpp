// Gives scaled_dot_product_attention the smallest boolean mask that means the same. transformers' masking
// utilities build an encoder's padding mask as `ones & (q_idx >= 0) & padding[b, kv_idx]`: a [B, 1, Lq, Lk]
// tensor whose query factor is true everywhere (q_idx is an arange). Attention broadcasts its mask itself, so
// it can read the [B, 1, 1, Lk] padding factor instead: the engine then loads one mask row per (batch, head)
// rather than a row per query, and the AND over [B, 1, Lq, Lk] is never computed.
//
// Rewrites, on the attn_mask operand only (other readers keep their value) and only where the mask widens no
// dim of the scores [q's batch dims..., Lq, Lk] (each of its dims 1 or the scores' own):
//   expand(m) -> m                  (attention broadcasts m the same way)
//   and(a, b) -> a, b all true      (bool __and__ / logical_and / bitwise_and; a broadcasts to the result)
// "All true" is ir::provably_all_true (kiln/ir/attention_mask_facts.h): a `full` of true, `x >= c` over an
// arange, ANDs and views of such. A decoder's causal factor `kv_idx <= q_idx` is not all true and stays; the
// attention converter reads it as the engine's causal flag (conversion/converters/attention/sdpa.cpp).

#include "../rewrite.h"
#include "kiln/ir/attention_mask_facts.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

/// How many rewrites one mask takes at most (masks are a handful of ops deep).
constexpr int kMaxSteps = 16;

/// The smaller mask `mask` reduces to (itself when nothing applies).
ir::Value* simplified(ir::Value* mask) {
  for (int step = 0; step < kMaxSteps && mask->producer() != nullptr; ++step) {
    const ir::Node& n = *mask->producer();
    if (detail::is_op(n, "aten.expand.default")) {
      mask = detail::tensor_arg(n, "self");
      continue;
    }
    if (mask->meta().dtype != DType::Bool || !ir::is_boolean_and(n)) break;
    ir::Value* a = detail::tensor_arg_if_tensor(n, "self");
    ir::Value* b = detail::tensor_arg_if_tensor(n, "other");
    if (a == nullptr || b == nullptr || a->meta().dtype != DType::Bool || b->meta().dtype != DType::Bool)
      break;
    if (ir::provably_all_true(*b)) {
      mask = a;
    } else if (ir::provably_all_true(*a)) {
      mask = b;
    } else {
      break;
    }
  }
  return mask;
}

bool run_simplify_attention_mask(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (!detail::is_op(*node, "aten.scaled_dot_product_attention.default")) continue;
    ir::Value* mask = detail::tensor_arg(*node, "attn_mask");
    ir::Value* q = detail::tensor_arg(*node, "query");
    ir::Value* k = detail::tensor_arg(*node, "key");
    if (mask == nullptr || q == nullptr || k == nullptr || !ir::mask_within_scores(*mask, *q, *k)) continue;
    ir::Value* smaller = simplified(mask);
    if (smaller == mask) continue;
    node->set_arg("attn_mask", ir::Argument::tensor(smaller));
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_simplify_attention_mask_pass() {
  return std::make_shared<FunctionPass>("simplify_attention_mask",
                                        "Gives scaled_dot_product_attention the smallest boolean mask with "
                                        "the same meaning: an expand dropped (attention "
                                        "broadcasts), an AND with an operand that is provably all true (a "
                                        "full of true, x >= 0 over an arange, as in "
                                        "transformers' padding masks) reduced to the other operand.",
                                        run_simplify_attention_mask);
}

}  // namespace kiln::lowering
