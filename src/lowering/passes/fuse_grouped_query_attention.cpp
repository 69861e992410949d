// Grouped-query attention without the copies: transformers' repeat_kv, which gives each query head its own
// copy of the key and value heads it shares (reshape(expand(unsqueeze(x, 2), [B, Hkv, g, L, D]),
// [B, Hkv * g, L, D])), feeding scaled_dot_product_attention as key and value, becomes
// scaled_dot_product_attention(q, x_k, x_v, ..., enable_gqa=True): torch's own semantics for a key / value
// head read by g consecutive query heads (repeat_interleave over dim -3, which is what the expand over the
// new dim after the kv heads makes). The engine's Attention layer then reads the kv heads in place
// (kv_group).

#include <optional>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

/// What repeat_kv made an operand from: the un-repeated [B, Hkv, L, D] tensor and the group g.
struct Repeat {
  ir::Value* source = nullptr;
  int64_t group = 0;
};

/// `v` as repeat_kv(x, g): reshape to [B, Hkv * g, L, D] of an expand to [B, Hkv, g, L, D] of x with a size-1
/// dim inserted at 2 (unsqueeze(x, 2), or a reshape that does the same); static Hkv and g.
std::optional<Repeat> repeated_kv(ir::Value* v) {
  ir::Node* reshape = detail::producer_of(v, "aten.reshape.default");
  if (reshape == nullptr) return std::nullopt;
  ir::Node* expand = detail::producer_of(detail::tensor_arg(*reshape, "self"), "aten.expand.default");
  if (expand == nullptr) return std::nullopt;
  ir::Value* unsqueezed = detail::tensor_arg(*expand, "self");
  if (unsqueezed == nullptr || unsqueezed->producer() == nullptr) return std::nullopt;
  const ir::Node& insert = *unsqueezed->producer();
  const bool is_unsqueeze =
      detail::is_op(insert, "aten.unsqueeze.default") && detail::int_arg(insert, "dim", -1) == 2;
  if (!is_unsqueeze && !detail::is_op(insert, "aten.reshape.default")) return std::nullopt;
  ir::Value* x = detail::tensor_arg(insert, "self");
  if (x == nullptr) return std::nullopt;
  const auto &xs = x->meta().sizes, &us = unsqueezed->meta().sizes, &es = expand->output(0)->meta().sizes,
             &rs = v->meta().sizes;
  if (xs.size() != 4 || us.size() != 5 || es.size() != 5 || rs.size() != 4) return std::nullopt;
  // x [B, Hkv, L, D] -> [B, Hkv, 1, L, D] -> [B, Hkv, g, L, D] -> [B, Hkv * g, L, D]
  const std::optional<int64_t> hkv = xs[1].as_int(), one = us[2].as_int(), g = es[2].as_int(),
                               h = rs[1].as_int();
  if (!hkv || !g || !h || one != std::optional<int64_t>(1) || *g < 1 || *h != *hkv * *g) return std::nullopt;
  for (size_t d : {size_t{0}, size_t{1}}) {
    if (!(us[d] == xs[d]) || !(es[d] == xs[d])) return std::nullopt;
  }
  for (size_t d : {size_t{2}, size_t{3}}) {
    if (!(us[d + 1] == xs[d]) || !(es[d + 1] == xs[d]) || !(rs[d] == xs[d])) return std::nullopt;
  }
  if (!(rs[0] == xs[0])) return std::nullopt;
  return Repeat{x, *g};
}

bool run_fuse_grouped_query_attention(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (ir::Node* node : graph.nodes()) {
    if (!detail::is_op(*node, "aten.scaled_dot_product_attention.default") ||
        detail::bool_arg(*node, "enable_gqa", false)) {
      continue;
    }
    ir::Value *query = detail::tensor_arg(*node, "query"), *key = detail::tensor_arg(*node, "key"),
              *value = detail::tensor_arg(*node, "value");
    if (query == nullptr || key == nullptr || value == nullptr) continue;
    const std::optional<Repeat> k = repeated_kv(key), v = repeated_kv(value);
    if (!k || !v || k->group != v->group || k->group < 2) continue;
    // The query must have the repeated heads itself (sdpa without enable_gqa would broadcast fewer).
    const auto& qs = query->meta().sizes;
    if (qs.size() != 4 || !(qs[1] == key->meta().sizes[1])) continue;
    std::vector<ir::NamedArgument> args = node->args();
    bool has_gqa = false;
    for (ir::NamedArgument& a : args) {
      if (a.name == "key") a.value = ir::Argument::tensor(k->source);
      if (a.name == "value") a.value = ir::Argument::tensor(v->source);
      if (a.name == "enable_gqa") {
        a.value = ir::Argument::bool_(true);
        has_gqa = true;
      }
    }
    if (!has_gqa) args.push_back(detail::named("enable_gqa", ir::Argument::bool_(true), true));
    ir::Value* sdpa = detail::emit(graph, node, "aten.scaled_dot_product_attention.default", std::move(args),
                                   node->output(0)->meta(), "scaled_dot_product_attention");
    detail::replace_node(graph, node, {sdpa});
    detail::erase_dead_producers(graph, {key, value},
                                 {"aten.reshape.default", "aten.expand.default", "aten.unsqueeze.default"});
    changed = true;
  }
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_fuse_grouped_query_attention_pass() {
  return std::make_shared<FunctionPass>(
      "fuse_grouped_query_attention",
      "Reads transformers' repeat_kv (unsqueeze, expand, reshape) of an attention's key and value as "
      "enable_gqa on the un-repeated tensors.",
      run_fuse_grouped_query_attention);
}

}  // namespace kiln::lowering
