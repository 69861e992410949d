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
// An operand is all true when it is a `full` of a nonzero value, an AND of all-true operands, a view of one,
// or `x >= c` / `x > c` (c an integer) where every element of the int64 x is known to be at least (more than)
// c: x an arange with a positive step, a sum of such and constants, or a view of one.

#include <optional>
#include <vector>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"
#include "kiln/support/dtype.h"

namespace kiln::lowering {
namespace {

/// How many producers the value analyses follow: masks are a handful of ops deep.
constexpr int kMaxDepth = 16;
/// Bounds beyond this magnitude are not tracked (far from int64's range, so sums and products of two checked
/// bounds cannot wrap).
constexpr int64_t kMaxBound = int64_t{1} << 40;

bool in_tracked_range(int64_t x) { return x >= -kMaxBound && x <= kMaxBound; }

bool is_view_of_self(const ir::Node& n) {
  return detail::is_op_any(
      n, {"aten.unsqueeze.default", "aten.reshape.default", "aten.view.default", "aten.expand.default",
          "aten.permute.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.clone.default",
          "aten.slice.Tensor", "aten.select.int"});
}

std::optional<int64_t> int_number(const ir::Argument* a) {
  if (a == nullptr || a->kind() != ir::Argument::Kind::Int) return std::nullopt;
  return a->as_int();
}

/// A lower bound of every element of the int64 tensor `v`, where the ops that made it give one (int64 only:
/// narrower integer types wrap within the tracked range).
std::optional<int64_t> lower_bound(const ir::Value* v, int depth) {
  if (v == nullptr || depth > kMaxDepth || !v->is_tensor() || v->meta().dtype != DType::Int64)
    return std::nullopt;
  const ir::Node* n = v->producer();
  if (n == nullptr) return std::nullopt;
  if (detail::is_op(*n, "aten.arange.default")) return 0;
  if (detail::is_op_any(*n, {"aten.arange.start", "aten.arange.start_step"})) {
    const auto start = int_number(n->find_arg("start"));
    const auto step =
        detail::is_op(*n, "aten.arange.start") ? std::optional<int64_t>(1) : int_number(n->find_arg("step"));
    if (!start || !step || *step <= 0 || !in_tracked_range(*start)) return std::nullopt;
    return start;
  }
  if (detail::is_op_any(*n, {"aten.add.Tensor", "aten.add.Scalar"})) {
    const auto self = lower_bound(detail::tensor_arg_if_tensor(*n, "self"), depth + 1);
    const ir::Argument* other_arg = n->find_arg("other");
    std::optional<int64_t> other = int_number(other_arg);
    if (!other && other_arg != nullptr && other_arg->kind() == ir::Argument::Kind::Tensor) {
      other = lower_bound(other_arg->as_tensor(), depth + 1);
    }
    const auto alpha = n->has_arg("alpha") ? int_number(n->find_arg("alpha")) : std::optional<int64_t>(1);
    if (!self || !other || !alpha || *alpha < 0 || !in_tracked_range(*alpha) || !in_tracked_range(*other)) {
      return std::nullopt;
    }
    int64_t scaled = 0, sum = 0;
    if (__builtin_mul_overflow(*alpha, *other, &scaled) || __builtin_add_overflow(*self, scaled, &sum) ||
        !in_tracked_range(sum)) {
      return std::nullopt;
    }
    return sum;
  }
  if (is_view_of_self(*n)) return lower_bound(detail::tensor_arg(*n, "self"), depth + 1);
  return std::nullopt;
}

bool is_boolean_and(const ir::Node& n) {
  return detail::is_op_any(n, {"aten.__and__.Tensor", "aten.logical_and.default", "aten.bitwise_and.Tensor"});
}

/// True when every element of the boolean tensor `v` is provably true.
bool all_true(const ir::Value* v, int depth) {
  if (v == nullptr || depth > kMaxDepth || !v->is_tensor() || v->meta().dtype != DType::Bool) return false;
  const ir::Node* n = v->producer();
  if (n == nullptr) return false;
  if (detail::is_op(*n, "aten.full.default")) {
    const ir::Argument* fill = n->find_arg("fill_value");
    if (fill == nullptr) return false;
    switch (fill->kind()) {
      case ir::Argument::Kind::Int: return fill->as_int() != 0;
      case ir::Argument::Kind::Bool: return fill->as_bool();
      case ir::Argument::Kind::Float: return fill->as_float() != 0.0;  // NaN included: bool(NaN) is true
      default: return false;
    }
  }
  if (detail::is_op_any(*n, {"aten.ge.Scalar", "aten.gt.Scalar"})) {
    // An integer `other` only: torch compares an integer tensor with a float in float32, where x > c does not
    // follow from the integer bound once |c| >= 2^24.
    const auto bound = lower_bound(detail::tensor_arg(*n, "self"), depth + 1);
    const auto c = int_number(n->find_arg("other"));
    if (!bound || !c) return false;
    return detail::is_op(*n, "aten.ge.Scalar") ? *bound >= *c : *bound > *c;
  }
  if (is_boolean_and(*n)) {
    return all_true(detail::tensor_arg_if_tensor(*n, "self"), depth + 1) &&
           all_true(detail::tensor_arg_if_tensor(*n, "other"), depth + 1);
  }
  if (is_view_of_self(*n)) return all_true(detail::tensor_arg(*n, "self"), depth + 1);
  return false;
}

/// The smaller mask `mask` reduces to (itself when nothing applies).
ir::Value* simplified(ir::Value* mask) {
  for (int step = 0; step < kMaxDepth && mask->producer() != nullptr; ++step) {
    const ir::Node& n = *mask->producer();
    if (detail::is_op(n, "aten.expand.default")) {
      mask = detail::tensor_arg(n, "self");
      continue;
    }
    if (mask->meta().dtype != DType::Bool || !is_boolean_and(n)) break;
    ir::Value* a = detail::tensor_arg_if_tensor(n, "self");
    ir::Value* b = detail::tensor_arg_if_tensor(n, "other");
    if (a == nullptr || b == nullptr || a->meta().dtype != DType::Bool || b->meta().dtype != DType::Bool)
      break;
    if (all_true(b, 0)) {
      mask = a;
    } else if (all_true(a, 0)) {
      mask = b;
    } else {
      break;
    }
  }
  return mask;
}

/// Whether every dim of `mask` (aligned from the end) is 1 or the matching dim of the scores [q's batch
/// dims..., Lq, Lk]: then the mask widens no dim of the result, and any smaller mask it was broadcast from
/// means the same.
bool within_scores(const ir::Value& mask, const ir::Value& q, const ir::Value& k) {
  const auto& m = mask.meta().sizes;
  std::vector<ir::SymExpr> scores = q.meta().sizes;
  if (scores.size() < 2 || k.meta().sizes.size() < 2) return false;
  scores.back() = k.meta().sizes[k.meta().sizes.size() - 2];
  if (m.size() > scores.size()) return false;
  for (size_t i = 1; i <= m.size(); ++i) {
    const ir::SymExpr& d = m[m.size() - i];
    if (d.as_int() != std::optional<int64_t>(1) && d != scores[scores.size() - i]) return false;
  }
  return true;
}

bool run_simplify_attention_mask(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (!detail::is_op(*node, "aten.scaled_dot_product_attention.default")) continue;
    ir::Value* mask = detail::tensor_arg(*node, "attn_mask");
    ir::Value* q = detail::tensor_arg(*node, "query");
    ir::Value* k = detail::tensor_arg(*node, "key");
    if (mask == nullptr || q == nullptr || k == nullptr || !within_scores(*mask, *q, *k)) continue;
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
